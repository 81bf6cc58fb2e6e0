"""Ordering and packing of judgments (pure logic, no model)."""

import pytest

from judgelab.engine._schedule import chunk_bounds, common_prefix, last_bound, plan_batches, segments, shared_base


def test_common_prefix_and_base():
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    prompts = sorted([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3, 9]])
    assert shared_base(prompts) == 2
    # every prompt keeps at least one token to score
    assert shared_base([[1, 2], [1, 2, 3]]) == 1


def _trie_nodes(prompts, base):
    return len({tuple(p[: i + 1]) for p in prompts for i in range(base, len(p))})


def test_segments_decode_every_trie_node_once():
    doc = list(range(100, 120))
    prompts = sorted([[1] + doc + [7, k, k + 1] for k in range(5)] + [[1, 99, 98], [1, 99, 97, 5], [1] + doc])
    base = shared_base(prompts)
    segs = segments(prompts, 0, len(prompts), base)
    assert sum(s.end - s.start for s in segs) == _trie_nodes(prompts, base)
    # each prompt's tokens above the base are covered exactly once, in order, by segments tagged with it
    for i, p in enumerate(prompts):
        covered = sorted((s.start, s.end) for s in segs if i in s.members)
        pos = base
        for start, end in covered:
            assert start == pos
            assert all(prompts[s.owner][start:end] == p[start:end] for s in segs if (s.start, s.end) == (start, end) and i in s.members)
            pos = end
        assert pos == len(p)
        # exactly one segment reads this prompt's logits, at its last token
        assert [s.end for s in segs if s.logits_for == i] == [len(p)]


def test_the_shared_document_is_one_segment_for_all_claims():
    doc = list(range(100, 150))
    prompts = sorted([[1] + doc + [7, k] for k in range(10)])
    segs = segments(prompts, 0, len(prompts), shared_base(prompts))
    shared = [s for s in segs if len(s.members) == 10]
    assert len(shared) == 0  # base already holds the shared document: 1 + 50 + 1 tokens
    segs = segments(prompts, 0, len(prompts), 1)
    assert [len(s.members) for s in segs][0] == 10
    assert segs[0].end - segs[0].start == len(doc) + 1


def test_batches_respect_token_and_sequence_limits():
    prompts = sorted([[1] * 10 + [k] for k in range(12)])
    assert plan_batches(prompts, 0, n_batch=13, max_seqs=62) == [(0, 3), (3, 6), (6, 9), (9, 12)]
    assert plan_batches(prompts, 0, n_batch=10_000, max_seqs=5) == [(0, 5), (5, 10), (10, 12)]
    assert plan_batches([[1] * 500], 0, n_batch=64, max_seqs=8) == [(0, 1)]


def test_prefix_groups_keep_a_documents_claims_together():
    from judgelab.engine._schedule import prefix_groups

    instructions = [1, 2, 3]
    doc_a, doc_b = [10] * 40, [20] * 40
    prompts = sorted(
        [instructions + doc_a + [c] for c in (7, 8, 9)] + [instructions + doc_b + [c, c] for c in (7, 8)] + [[1, 2, 9]]
    )
    runs = prefix_groups(prompts, min_shared=32)
    assert runs == [(0, 3, 43), (3, 5, 43), (5, 6, 0)]  # not one run over the instructions alone
    # a prefix shorter than min_shared is not worth its own forward
    assert prefix_groups(prompts, min_shared=100) == [(i, i + 1, 0) for i in range(len(prompts))]
    # identical prompts keep one token each after the prefix
    assert prefix_groups([[1] * 40, [1] * 40], min_shared=8) == [(0, 2, 39)]


NL = 0  # the "newline" token of these tests


def _bounds(tokens):
    return chunk_bounds(tokens, lambda t: t == NL, min_tokens=4, max_tokens=10)


def test_chunk_bounds_cut_after_a_newline_once_long_enough_and_at_the_maximum():
    tokens = [5, NL, 5, 5, 5, NL, 5, 5] + [7] * 25
    # the first newline comes too early (2 tokens), the second ends a piece of 6; then every 10 tokens
    assert _bounds(tokens) == [6, 16, 26]
    assert _bounds([7] * 20) == [10, 20]  # a prompt ending on a bound lists its length
    assert _bounds([]) == []
    with pytest.raises(ValueError, match="min_tokens"):
        chunk_bounds([1], lambda t: False, min_tokens=0, max_tokens=4)


def test_chunk_bounds_inside_a_shared_prefix_do_not_depend_on_what_follows():
    """What makes a cached prefix reusable: cut back to its last bound, its cells were computed in the
    very pieces that the other prompt uses alone."""
    doc = [5, 6, NL, 7, 8, 9, 10, NL] + [11] * 13 + [NL]
    a = doc + [3, 1, 2, NL, 4]
    b = doc + [3, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]
    shared = common_prefix(a, b)
    ba, bb = _bounds(a), _bounds(b)
    assert [x for x in ba if x <= shared] == [x for x in bb if x <= shared]
    assert last_bound(ba, shared) == last_bound(bb, shared) == len(doc)  # only "3" is evaluated again
    assert last_bound(ba, 3) == 0 and last_bound([], 50) == 0
