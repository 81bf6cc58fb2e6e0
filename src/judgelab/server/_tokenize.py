"""``POST /tokenize``: the served model's tokens of a text, in llama.cpp server's shape.

A remote judge (``judgelab.engine``'s remote backend) asks this endpoint to
count tokens with the served model's own tokenizer, so that it cuts long
documents into the same chunks as the model in process. The body is
llama.cpp's: ``{"content": text, "add_special": false}``; the answer
``{"tokens": [ids]}``. The text is plain (control-token strings in it are
text, as judged documents are), and ``add_special`` adds the start token.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, FastAPI, Request
from pydantic import BaseModel, ConfigDict

from judgelab.engine import Prompt
from judgelab.server._http import parse_body
from judgelab.server._state import JudgeState

__all__ = ["register", "router"]

router = APIRouter()


class TokenizeBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    content: str
    add_special: bool = False


@router.post("/tokenize", response_model=None)
async def tokenize(request: Request) -> dict[str, object]:
    body = await parse_body(request, TokenizeBody)
    state: JudgeState = request.app.state.judge
    pieces = Prompt.plain(body.content).pieces()
    tokens = await asyncio.to_thread(state.model.backend.tokenize_pieces, pieces, add_bos=body.add_special)
    return {"tokens": list(tokens)}


def register(app: FastAPI) -> None:
    """Serve ``POST /tokenize`` on ``app``."""
    app.include_router(router)
