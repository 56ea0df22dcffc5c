"""Alpha-equivalence: renaming the user objects of a claim never changes its verdict.

A renaming is a bijection on the names of a claim's user objects (dimension and scalar symbols,
MatrixSymbols, families, permutations, score functions) that keeps each object's kind and
assumptions (see ``corpus_rename.rename_claim``). The new names are drawn from

(a) the names symattn uses inside, collected while the claims below are built and verified
    (every Symbol and Dummy symattn creates, identifiers in the verdict traces, the indices bound
    by the definitions' binders, and entry-symbol templates such as ``{}[0,0]`` applied to
    whatever a matrix of the claim is renamed to);
(b) the names of the claim's other objects (swaps);
(c) random identifiers.

A renaming that would make a name look like a member of a family (``A_2`` beside family ``A``),
which the engine rightly refuses, is skipped. The claims are those of the theorem library, the
gallery and the corpus that verify decides (proved, refuted or refused) in milliseconds, listed
below by name after measuring, and a few slower claims with binders, renamed with extra weight
on the names of their own bound indices; the verdict (status and scope general / at dims) of each renamed
claim must equal that of the claim as written.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp
from corpus import CORPUS, decide, outcome_of, run
from corpus_rename import (
    bound_index_names,
    entry_templates,
    family_names,
    keeps_member_names_apart,
    recording_symbol_names,
    rename_claim,
    trace_names,
    usable,
    user_names,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symattn.errors import ClaimError
from symattn.theorems import load_library

#: The budget of every verify here: far above the milliseconds these claims take, so that
#: a verdict never depends on the machine's speed.
BUDGET = 5.0

#: Theorem claims (name, index) of the library that verify decides in under 0.12 s (measured).
LIBRARY_CLAIMS: tuple = (
    ('kv_cache_decoding_is_last_causal_column', 0),
    ('kv_cache_decoding_is_last_causal_column', 1),
    ('circuits_decomposition', 3),
    ('circuits_decomposition_row', 0),
    ('circuits_decomposition_row', 1),
    ('circuits_decomposition_row', 2),
    ('circuits_decomposition_row', 3),
    ('circuits_decomposition_row', 4),
    ('column_row_transpose', 0),
    ('column_row_transpose', 1),
    ('column_row_transpose', 2),
    ('column_row_transpose', 3),
    ('column_row_transpose', 5),
    ('single_head_reduces_to_attention', 1),
    ('single_head_reduces_to_attention', 2),
    ('single_head_reduces_to_attention', 3),
    ('projection_composition_collapses', 0),
    ('attention_pool_is_permutation_invariant', 3),
    ('gqa_with_G_equal_H_is_multihead', 0),
    ('repeat_kv_equals_sharing', 1),
    ('repeat_kv_equals_sharing', 3),
    ('repeat_kv_equals_sharing', 5),
    ('repeat_kv_equals_sharing', 7),
    ('mean_pool_is_constant_score_attention_pool', 0),
    ('mean_pool_is_constant_score_attention_pool', 1),
    ('mean_pool_is_constant_score_attention_pool', 2),
    ('mean_pool_is_constant_score_attention_pool', 3),
    ('query_pool_is_cross_attention_with_one_query', 0),
    ('query_pool_is_cross_attention_with_one_query', 1),
    ('query_pool_is_cross_attention_with_one_query', 2),
    ('multihead_pool_is_concat_of_head_pools', 1),
    ('multihead_pool_is_concat_of_head_pools', 3),
    ('multihead_pool_is_concat_of_head_pools', 4),
    ('fused_qkv_projection', 1),
    ('scale_folds_into_query_projection', 3),
    ('heads_concatenate_before_output_projection', 1),
    ('attention_pooling_folds_projections', 1),
    ('mean_pool_is_uniform_attention', 0),
    ('kv_cache_step_needs_no_mask', 0),
    ('blockwise_logsumexp_merge', 1),
    ('blockwise_logsumexp_merge', 3),
    ('blockwise_logsumexp_merge', 5),
    ('blockwise_logsumexp_merge', 6),
    ('blockwise_logsumexp_merge', 7),
    ('rope_scores_depend_on_relative_position', 0),
    ('rope_scores_depend_on_relative_position', 1),
    ('rope_scores_depend_on_relative_position', 2),
    ('rope_scores_depend_on_relative_position', 3),
    ('rope_scores_depend_on_relative_position', 4),
    ('rope_scores_depend_on_relative_position', 5),
    ('rope_scores_depend_on_relative_position', 7),
    ('dot_product_variance_grows_with_d_k', 0),
    ('dot_product_variance_grows_with_d_k', 2),
    ('dot_product_variance_grows_with_d_k', 3),
    ('dot_product_variance_sympy_stats', 0),
    ('dot_product_variance_sympy_stats', 1),
    ('dot_product_variance_sympy_stats', 2),
    ('dot_product_variance_sympy_stats', 3),
    ('dot_product_variance_sympy_stats', 4),
    ('dot_product_variance_sympy_stats', 5),
    ('dot_product_variance_sympy_stats', 6),
    ('dot_product_variance_sympy_stats', 8),
    ('softmax_columns_sum_to_one', 0),
    ('softmax_columns_sum_to_one', 1),
    ('softmax_shift_invariance', 0),
    ('softmax_shift_invariance', 1),
    ('worked_example_thinking_machines', 0),
    ('worked_example_thinking_machines', 1),
    ('worked_example_thinking_machines', 2),
    ('worked_example_thinking_machines', 3),
    ('worked_example_thinking_machines', 4),
)
#: Gallery items refuted in under 0.35 s (measured).
GALLERY_CLAIMS: tuple = (
    ('mistake_softmax_transpose_same_axis', 0),
    ('mistake_transpose_keeps_order', 0),
    ('mistake_qk_circuit_untransposed_in_column_scores', 0),
    ('rope_scores_depend_on_a_minus_b', 0),
)
#: Corpus entries decided in under 0.06 s (measured; collision traps, whose names matter, are
#: left out).
CORPUS_CLAIMS: tuple = (
    'attention_linear_in_values_scaled',
    'attention_output_projection_moves_inside_scaled',
    'attention_column_row_transpose_scaled',
    'attention_linear_in_values_dot',
    'attention_output_projection_moves_inside_dot',
    'attention_column_row_transpose_dot',
    'attention_linear_in_values_f',
    'attention_output_projection_moves_inside_f',
    'attention_column_row_transpose_f',
    'attention_off_by_1e-15_f',
    'attention_definition_scaled',
    'attention_definition_f',
    'attention_dot_equals_scaled_at_d_k_1',
    'attention_prescaled_queries_equal_dot',
    'attention_projection_moves_to_keys',
    'attention_scaled_by_d_v_with_d_v_equal_d_k',
    'attention_exact_rational_shift_is_harmless',
    'softmax_transpose_flips_axis',
    'softmax_columns_sum_to_one',
    'softmax_row_axis_rows_sum_to_one',
    'softmax_column_shift_invariance',
    'softmax_of_zero_is_uniform_over_rows',
    'softmax_of_zero_uniform_over_the_wrong_count',
    'softmax_row_axis_of_zero',
    'softmax_single_row_is_all_ones',
    'softmax_is_all_ones_for_any_rows',
    'softmax_is_all_ones_at_dims_where_false',
    'softmax_identity_both_axes',
    'softmax_identity_is_identity',
    'softmax_side_by_side_blocks_column_axis',
    'softmax_side_by_side_blocks_row_axis',
    'softmax_stacked_blocks_row_axis',
    'softmax_stacked_blocks_column_axis',
    'softmax_off_by_1e-15',
    'multihead_identity_projections_single_head',
    'nested_head_sums_factor_at_H_2',
    'mean_pool_is_zero_score_attention_pool',
    'mean_pool_of_one_feature_is_the_feature',
    'attention_pool_weighted_sum',
    'query_pool_is_cross_attention_with_one_query',
    'query_pool_row_is_transpose',
    'self_attention_is_cross_attention_with_itself',
    'cross_attention_definition',
    'self_attention_row_is_transpose',
    'permutation_is_orthogonal_PPt',
    'permutation_is_orthogonal_PtP',
    'permutation_is_an_involution',
    'permutation_is_symmetric',
    'mqa_is_multihead_with_shared_weights',
    'repeat_kv_heads_reads_group_floor',
    'repeat_kv_list_reads_consecutive',
    'repeat_kv_list_interleaves',
    'causal_attention_one_token_is_full_attention',
    'causal_row_convention_is_transpose',
    'causal_full_offset_is_no_mask',
    'mask_dropped_inside_softmax',
    'kv_cache_extend_holds_all_keys',
    'kv_cache_values_swapped_with_keys',
    'rope_relative_position_llama',
    'rope_relative_position_wrong_sign_llama',
    'rope_scores_shift_invariant_llama',
    'rope_scores_ignore_positions_llama',
    'rope_composes_additively_llama',
    'rope_composes_multiplicatively_llama',
    'rope_relative_position_theta',
    'rope_relative_position_wrong_sign_theta',
    'rope_scores_shift_invariant_theta',
    'rope_scores_ignore_positions_theta',
    'rope_composes_additively_theta',
    'rope_composes_multiplicatively_theta',
    'rope_at_position_zero_is_identity',
    'rope_is_symmetric',
    'rope_single_pair_is_rotation',
    'rotation_angle_addition',
    'rotation_transpose_is_itself',
    'rope_row_convention',
    'circuits_ov_qk',
    'circuits_gauge_invariance',
    'circuits_gauge_on_queries_without_inverse_transpose',
    'circuits_gauge_on_queries_with_inverse_transpose',
    'explicit_matrix_of_elements_is_the_matrix',
    'explicit_matrix_of_elements_transposed',
    'explicit_transpose_of_product',
    'explicit_transpose_keeps_order',
    'explicit_bilinear_form_with_transpose',
    'explicit_attention_at_two_tokens',
    'explicit_columns_sum_to_one',
    'collide_e0_scalar_scales_attention',
    'collide_dimension_named_h_in_family_shape',
    'collide_scalar_h_scales_heads',
    'collide_scalar_h_is_not_the_head_index',
    'collide_scalar_g_in_repeat_kv',
    'collide_dimensions_named_g_and_j',
    'collide_scalar_i_in_rope_frequencies',
    'collide_scalar_i_rope_wrong_sign',
    'collide_scalar_k_scales_values',
    'collide_scalar_b0_scales_values',
    'collide_dimension_named_b0',
    'collide_dimension_named_i_and_j',
    'collide_dimension_named_i_and_j_false',
    'collide_matrix_named_h',
    'collide_matrix_named_h_true',
    'scalar_worked_example_scale',
    'scalar_worked_example_rounding_is_not_equality',
    'scalar_softmax_two_entries',
    'scalar_sqrt2_off_by_1e-17',
    'scalar_exp_off_by_1e-15',
    'scalar_binomial_square',
    'scalar_freshman_square',
    'scalar_sqrt_of_square_for_dimensions',
    'scalar_dimension_square_is_itself',
    'scalar_e0_symbol_is_not_e',
)

#: Claims with binders (nested head sums, GQA's groups, RoPE's blocks, binders built by hand),
#: renamed with extra weight on the names of their own bound indices; decided in under 0.3 s.
BINDER_LIBRARY_CLAIMS: tuple = (
    ('repeat_kv_head_h_reads_group_floor', 0),
    ('repeat_kv_head_h_reads_group_floor', 1),
    ('repeat_kv_head_h_reads_group_floor', 2),
)
BINDER_CORPUS_CLAIMS: tuple = (
    'nested_stack_of_concats_is_outer_product',
    'nested_head_sum_over_different_counts',
    'nested_head_sum_substituted_H_agrees_with_concrete',
    'hand_bound_head_sum_alpha',
    'hand_bound_head_sum_rebinding_read_as_one_sum',
    'hand_bound_blockdiag_outer_scalar_captured',
    'collide_scalar_j_in_repeat_kv',
    'collide_dimensions_named_g_and_j',
    'collide_scalar_i_in_rope_frequencies',
    'repeat_kv_heads_reads_group_floor',
)

EXAMPLES = {"library": 750, "gallery": 100, "corpus": 950, "binders": 200}


@dataclass(frozen=True)
class Subject:
    label: str
    lhs: object
    rhs: object
    kwargs: dict
    outcome: str
    names: tuple
    families: frozenset
    #: the names of the indices bound inside the claim
    bound: tuple = ()


def _outcome(lhs, rhs, kwargs) -> tuple[str, object]:
    try:
        v = run(lhs, rhs, kwargs)
    except ClaimError as exc:
        return "refused", exc
    return outcome_of(v), v


def _library_claims(selection) -> list:
    registry = load_library()
    out = []
    for name, k in selection:
        th = registry[name]
        lhs, rhs = th.claims()[k]
        out.append((f"{name}[{k}]", lhs, rhs, {"at": th.at} if th.at else {}))
    return out


def _corpus_claims(selection) -> list:
    by_name = {e.name: e for e in CORPUS}
    out = []
    for name in selection:
        lhs, rhs, kwargs = by_name[name].claim()
        out.append((name, lhs, rhs, {k: v for k, v in kwargs.items() if k != "budget"}))
    return out


def _probe_instances(claims) -> None:
    """Run strategy D (exact instances) on each claim at size 2, the search switched off, so that
    the symbols D makes (entry symbols, exp atoms) are created and recorded."""
    for _, lhs, rhs, _ in claims:
        dims = sorted({s for e in (lhs, rhs) for s in e.atoms(sp.Symbol)
                       if type(s) is sp.Symbol and s.is_integer and s.is_positive}, key=str)
        try:
            run(lhs, rhs, {"at": [dict.fromkeys(dims, 2)], "budget": 2.0, "search_counterexample": False})
        except Exception:  # a probe only collects names; its verdict is not the point
            pass


@functools.lru_cache(maxsize=None)
def world() -> tuple[dict, tuple, tuple]:
    """The subjects of each source, the pool of internal names and the entry templates."""
    sources = {"library": _library_claims(LIBRARY_CLAIMS), "gallery": _library_claims(GALLERY_CLAIMS),
               "corpus": _corpus_claims(CORPUS_CLAIMS),
               "binders": _library_claims(BINDER_LIBRARY_CLAIMS) + _corpus_claims(BINDER_CORPUS_CLAIMS)}
    recorded: set = set()
    subjects: dict = {}
    with recording_symbol_names(recorded):
        for source, claims in sources.items():
            subjects[source] = []
            for label, lhs, rhs, kwargs in claims:
                kwargs = {**kwargs, "budget": BUDGET}
                outcome, v = _outcome(lhs, rhs, kwargs)
                if outcome != "refused":
                    recorded.update(trace_names(v.trace))
                bound = bound_index_names(lhs, rhs)
                recorded.update(bound)
                subjects[source].append(Subject(label, lhs, rhs, kwargs, outcome, tuple(user_names(lhs, rhs, kwargs)),
                                                frozenset(family_names(lhs, rhs)), tuple(sorted(bound))))
        _probe_instances(sources["gallery"] + sources["corpus"][:12])
    pool = tuple(sorted(nm for nm in recorded if usable(nm)))
    return subjects, pool, tuple(sorted(entry_templates(pool)))


identifiers = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_^']{0,5}\Z")


@st.composite
def renamings(draw, subject: Subject, pool: tuple, templates: tuple) -> dict:
    """A bijection old name -> new name on the subject's user names."""
    names = subject.names
    sources = [st.sampled_from(pool), st.sampled_from(names), identifiers]
    if subject.bound:  # the claim's own bound indices, the likeliest to be captured
        sources += [st.sampled_from(subject.bound)] * 2
    source = st.one_of(*sources)
    new = draw(st.lists(source, min_size=len(names), max_size=len(names), unique=True))
    if templates and len(names) > 1 and draw(st.booleans()):
        # an entry symbol of one renamed object given as the name of another: X and X[0,0]
        target, base = draw(st.permutations(range(len(names))))[:2]
        name = draw(st.sampled_from(templates)).format(new[base])
        if name not in new:
            new[target] = name
    return dict(zip(names, new))


def check_renaming(data, source: str) -> None:
    subjects, pool, templates = world()
    subject = data.draw(st.sampled_from(subjects[source]), label="claim")
    mapping = data.draw(renamings(subject, pool, templates), label="renaming")
    assume(keeps_member_names_apart(subject.names, subject.families, mapping))
    lhs, rhs, kwargs = rename_claim(subject.lhs, subject.rhs, subject.kwargs, mapping)
    outcome, v = _outcome(lhs, rhs, kwargs)
    detail = v if outcome == "refused" else v.explain()
    assert outcome == subject.outcome, (
        f"{subject.label}: {subject.outcome} as written, {outcome} after renaming {mapping}:\n"
        f"  lhs: {sp.sstr(lhs)}\n  rhs: {sp.sstr(rhs)}\n{detail}")


def _settings(source: str):
    return settings(max_examples=EXAMPLES[source], deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@_settings("library")
@given(data=st.data())
def test_renaming_keeps_library_verdicts(data):
    check_renaming(data, "library")


@_settings("gallery")
@given(data=st.data())
def test_renaming_keeps_gallery_verdicts(data):
    check_renaming(data, "gallery")


@_settings("corpus")
@given(data=st.data())
def test_renaming_keeps_corpus_verdicts(data):
    check_renaming(data, "corpus")


@_settings("binders")
@given(data=st.data())
def test_renaming_keeps_verdicts_of_claims_with_binders(data):
    check_renaming(data, "binders")


def test_internal_names_are_collected_not_typed():
    subjects, pool, templates = world()
    assert sum(EXAMPLES.values()) >= 2000
    assert all(subjects.values())
    # the binders' indices and the summation indices of strategy B are among them
    assert {"h", "i"} & set(pool), pool
    assert any(nm.startswith("_") for nm in pool), pool


def test_renaming_is_a_bijection_that_keeps_kinds():
    entry = next(e for e in CORPUS if e.name == "attention_query_permutation_equivariant_f")
    outcome, _, _ = decide(entry)
    lhs, rhs, kwargs = entry.claim()
    names = user_names(lhs, rhs, kwargs)
    assert {"P", "Q", "K", "V", "n", "m", "d_k", "d_v"} <= set(names)
    swap = dict(zip(names, names[1:] + names[:1]))
    lhs2, rhs2, _ = rename_claim(lhs, rhs, kwargs, swap)
    assert user_names(lhs2, rhs2) == sorted(swap.values())
    before = {s.name: s.assumptions0 for s in lhs.atoms(sp.Symbol) if type(s) is sp.Symbol}
    after = {s.name: s.assumptions0 for s in lhs2.atoms(sp.Symbol) if type(s) is sp.Symbol}
    assert {swap[k]: v for k, v in before.items()} == after
    assert _outcome(lhs2, rhs2, {"budget": BUDGET})[0] == outcome
