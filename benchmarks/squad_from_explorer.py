"""SQuAD v1.1 (train and dev) in its authors' JSON format, read from the SQuAD explorer's pages.

    python benchmarks/squad_from_explorer.py --repo /path/to/SQuAD-explorer.git --out runs/squad

The official JSON files are on the SQuAD site, and in ``rajpurkar/SQuAD-explorer`` under ``dataset/``
(as large files that a shallow mirror may lack). The same repository's history holds the explorer pages
its authors generated from the data set, one HTML page per Wikipedia article
(``explore/1.1/{train,dev}/TITLE.html`` at commit ``0b3c8e82``, the last before they were removed): each
paragraph in a ``<pre>``, then each question with its crowd answers. This script reads those pages
from a git directory (``git show COMMIT:PATH``, no work tree needed) and writes ``train-v1.1.json``
and ``dev-v1.1.json`` in the official shape (``data[].title``, ``paragraphs[].context``,
``qas[].question``, ``answers[].text`` / ``answer_start``), plus ``PROVENANCE.json`` with the commit,
every page's blob id and the counts, to compare with the official files (SQuAD 1.1: 87,599 train and
10,570 dev questions).

The pages carry no question ids: a question's id is ``TITLE-PARAGRAPH-QUESTION`` (its article, its
paragraph's index and its index in the paragraph, from 0). An answer's ``answer_start`` is where its
text first occurs in the paragraph (the pages do not keep the offsets); an answer whose text the
paragraph does not hold is dropped and counted.

Licence: the data set is CC BY-SA 4.0 (stated on the explorer's own index page at that commit); its text
is Wikipedia's (CC BY-SA). The repository's code is MIT.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

COMMIT = "0b3c8e824b9fd05ad69e9b6b590966e4aade2baf"
REPOSITORY = "rajpurkar/SQuAD-explorer"
LICENCE = "CC-BY-SA-4.0"

_PARAGRAPH = re.compile(r'<div class="para-wrap">(.*?)(?=<div class="para-wrap">|\Z)', re.S)
_CONTEXT = re.compile(r"<pre>(.*?)</pre>", re.S)
_QA = re.compile(r'<div class="qa-wrap">(.*?)</ol></div>', re.S)
_QUESTION = re.compile(r'<strong class="question">(.*?)</strong>', re.S)
_ANSWER = re.compile(r'<span class="answer">(.*?)</span>', re.S)
_TITLE = re.compile(r'<h1 id="title">(.*?)</h1>', re.S)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)} in {repo} failed: {done.stderr.strip()} "
                         f"(fetch {REPOSITORY} with its history and pass its git directory as --repo)")
    return done.stdout


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def parse_page(page: str, name: str) -> tuple[dict, int]:
    """One article in the official shape, and how many answers were dropped (their text is not in the paragraph)."""
    title = _TITLE.search(page)
    article = {"title": _text(title.group(1)).strip() if title else name, "paragraphs": []}
    dropped = 0
    for p_index, block in enumerate(_PARAGRAPH.findall(page)):
        context_match = _CONTEXT.search(block)
        if context_match is None:
            continue
        context = _text(context_match.group(1))
        qas = []
        for q_index, qa in enumerate(_QA.findall(block)):
            question = _QUESTION.search(qa)
            if question is None:
                continue
            answers = []
            for answer in (_text(a).strip() for a in _ANSWER.findall(qa)):
                start = context.find(answer)
                if not answer or start < 0:
                    dropped += 1
                    continue
                answers.append({"text": answer, "answer_start": start})
            qas.append({"id": f"{name}-{p_index}-{q_index}", "question": _text(question.group(1)).strip(),
                        "answers": answers})
        article["paragraphs"].append({"context": context, "qas": qas})
    return article, dropped


def convert(repo: Path, commit: str, split: str) -> tuple[dict, dict]:
    """(the split's data set, its provenance: page blob ids and counts)."""
    listing = _git(repo, "ls-tree", "-r", "-z", commit, f"explore/1.1/{split}/")  # -z: names unquoted
    pages = []
    for line in filter(None, listing.split("\0")):
        meta, path = line.split("\t", 1)
        if path.endswith(".html") and not path.endswith("/index.html"):
            pages.append((path, meta.split()[2]))
    if not pages:
        raise SystemExit(f"no explore/1.1/{split}/ pages at {commit} in {repo}")
    data, dropped = [], 0
    for path, _blob in sorted(pages):
        article, lost = parse_page(_git(repo, "show", f"{commit}:{path}"), Path(path).stem)
        data.append(article)
        dropped += lost
    questions = sum(len(p["qas"]) for a in data for p in a["paragraphs"])
    paragraphs = sum(len(a["paragraphs"]) for a in data)
    return ({"version": "1.1", "data": data},
            {"pages": dict(sorted(pages)), "articles": len(data), "paragraphs": paragraphs,
             "questions": questions, "answers_dropped": dropped})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, required=True, help=f"a git directory of {REPOSITORY} with its history")
    p.add_argument("--out", type=Path, default=Path("runs/squad"))
    p.add_argument("--commit", default=COMMIT)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    provenance = {"source": f"{REPOSITORY} @ {args.commit} : explore/1.1/{{train,dev}}/*.html",
                  "licence": LICENCE, "made_by": "python benchmarks/squad_from_explorer.py", "splits": {}}
    for split in ("train", "dev"):
        data, made = convert(args.repo, args.commit, split)
        (args.out / f"{split}-v1.1.json").write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        provenance["splits"][split] = made
        print(f"{split}: {made['articles']} articles, {made['paragraphs']} paragraphs, {made['questions']} questions "
              f"({made['answers_dropped']} answers not found in their paragraph, dropped)")
    (args.out / "PROVENANCE.json").write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
