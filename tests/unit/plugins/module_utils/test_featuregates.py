"""FeatureGate strings: parse as component-base does, merge and remove without losing or reordering gates."""
from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.storageperf.k8s.plugins.module_utils.ack import featuregates as F

NAMES = st.text(alphabet=string.ascii_letters, min_size=1, max_size=12)
VALUES = st.sampled_from(list(F.TRUE_VALUES + F.FALSE_VALUES) + ["yes", ""])


@st.composite
def gate_strings(draw):
    entries = draw(st.lists(st.tuples(NAMES, VALUES, st.booleans()), max_size=8))
    parts = [n if bare else f"{n}={v}" for n, v, bare in entries]
    sep = draw(st.sampled_from([",", ", ", " ,"]))
    return sep.join(parts)


WANTED = st.dictionaries(NAMES, st.booleans(), max_size=4)


def test_parse_reads_go_bools_last_wins_and_marks_bad_values():
    assert F.parse("A=true,B=False, C=1,D=yes,E,A=f") == {"A": False, "B": False, "C": True, "D": None, "E": None}
    assert F.parse("") == {} and F.parse(None) == {}


def test_merge_keeps_other_gates_where_they_are_and_appends_new_ones():
    assert F.merge("EnableVolumeGroupSnapshots=true", {"DiskADController": True, "DiskParallelAttach": True}) == \
        "EnableVolumeGroupSnapshots=true,DiskADController=true,DiskParallelAttach=true"
    # a gate with the wanted meaning keeps its spelling; one with another value is rewritten in place
    assert F.merge("DiskADController=True,X=1,DiskParallelAttach=false", {"DiskADController": True,
                                                                          "DiskParallelAttach": True}) == \
        "DiskADController=True,X=1,DiskParallelAttach=true"
    # nothing to do: the text comes back unchanged, spacing included
    assert F.merge("A=true, B=false", {"A": True}) == "A=true, B=false"
    assert F.merge("", {"A": True}) == "A=true"


def test_remove_drops_only_the_named_gates():
    assert F.remove("X=true,DiskADController=true,Y=false,DiskParallelAttach=true", ["DiskADController",
                                                                                     "DiskParallelAttach"]) == "X=true,Y=false"
    assert F.remove("X=true, Y=false", ["Z"]) == "X=true, Y=false"
    assert F.remove("DiskADController=true", ["DiskADController"]) == ""


def test_changes_lists_gates_whose_meaning_differs():
    assert F.changes("A=true,B=false", "A=True,B=true,C=false") == {"B": (False, True), "C": (None, False)}


@given(gate_strings(), WANTED)
def test_merge_never_loses_a_gate(text, wanted):
    out = F.merge(text, wanted)
    assert set(F.names(text)) | set(wanted) == set(F.names(out))


@given(gate_strings(), WANTED)
def test_merge_sets_the_wanted_meaning_and_keeps_the_others(text, wanted):
    before, after = F.parse(text), F.parse(F.merge(text, wanted))
    for name, value in wanted.items():
        assert after[name] is value
    for name, value in before.items():
        if name not in wanted:
            assert after[name] is value


@given(gate_strings(), WANTED)
def test_merge_is_idempotent(text, wanted):
    once = F.merge(text, wanted)
    assert F.merge(once, wanted) == once


@given(gate_strings(), WANTED)
def test_merge_is_order_stable(text, wanted):
    """Existing gates keep their relative order; new ones follow, in the order asked."""
    old, new = F.names(text), F.names(F.merge(text, wanted))
    assert new[:len(old)] == old
    assert new[len(old):] == [n for n in wanted if n not in old]


@given(gate_strings(), WANTED)
def test_remove_undoes_a_merge_of_gates_that_were_not_there(text, wanted):
    added = [n for n in wanted if n not in F.parse(text)]
    merged = F.merge(text, {n: wanted[n] for n in added})
    assert F.parse(F.remove(merged, added)) == F.parse(text)
    assert F.names(F.remove(merged, added)) == F.names(text)
