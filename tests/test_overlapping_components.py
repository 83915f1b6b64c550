"""``overlapping_components`` (the SDK's grouping of items whose [min, max] ranges overlap, transitively), checked
against the definition: a partition of the items into the connected components of the "ranges overlap" graph."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_cluster_core.sdk import overlapping_components


def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def test_components_of_an_example():
    spans = {"a": (0, 10), "b": (5, 20), "c": (20, 30), "d": (40, 50), "e": None, "f": (41, 42), "g": (-5, -1)}
    found = overlapping_components(spans, spans.__getitem__)
    # value order; "c" touches "b" at 20 (a shared end overlaps); "e", without a range, last and alone
    assert found == [["g"], ["a", "b", "c"], ["d", "f"], ["e"]]


def test_equal_ranges_keep_the_order_given_and_span_is_read_once():
    calls = []

    def span(item: str) -> tuple[str, str]:
        calls.append(item)
        return ("k1", "k5")

    assert overlapping_components(["z", "a", "m"], span) == [["z", "a", "m"]] and calls == ["z", "a", "m"]


spans_strategy = st.lists(st.one_of(st.none(), st.tuples(st.integers(-50, 50), st.integers(0, 30)).map(
    lambda low_width: (low_width[0], low_width[0] + low_width[1]))), max_size=40)  # fmt: skip


@given(spans_strategy)
def test_components_are_the_connected_overlaps(spans):
    items = list(range(len(spans)))
    components = overlapping_components(items, spans.__getitem__)
    placed = [i for c in components for i in c]
    # disjoint, and every item in one
    assert sorted(placed) == items and all(components)
    component_of = {i: n for n, c in enumerate(components) for i in c}
    for i in items:
        for j in items:
            if component_of[i] != component_of[j] and spans[i] is not None and spans[j] is not None:
                assert not overlap(spans[i], spans[j]), (spans[i], spans[j])  # different components never overlap
    for component in components:
        if any(spans[i] is None for i in component):
            assert len(component) == 1  # an item without a range is alone
            continue
        reached, frontier = {component[0]}, [component[0]]  # within one: connected through overlaps
        while frontier:
            i = frontier.pop()
            for j in component:
                if j not in reached and overlap(spans[i], spans[j]):
                    reached.add(j)
                    frontier.append(j)
        assert reached == set(component), component
        assert [spans[i] for i in component] == sorted(spans[i] for i in component)  # in value order
    ranged = [c for c in components if spans[c[0]] is not None]
    assert [min(spans[i][0] for i in c) for c in ranged] == sorted(min(spans[i][0] for i in c) for c in ranged)
    assert all(spans[c[0]] is None for c in components[len(ranged):])  # the unranged come last
