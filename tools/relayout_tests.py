"""Lay tests/ out like the code (issue 41 item 6): a deterministic, re-runnable move.

    python tools/relayout_tests.py            # rewrite tests/ (and the references to test files)
    python tools/relayout_tests.py --dry-run  # only print what it would do
    python tools/check_relayout.py            # the same move, proved: node ids before = after

Layout (docs/testing.md, "Layout of tests/"):
  lwsim/<mod>.py                          -> tests/test_<mod>.py
  lwsim/<sub>/<mod>.py                    -> tests/<sub>/test_<mod>.py
  lwsim/<sub>/__init__.py (the package)   -> tests/test_<sub>.py   (lwsim/backends/numba -> tests/backends/test_numba.py)
  lwsim/<pkg>/__main__.py (the CLI)       -> tests/<pkg>/test_main.py
  lwsim/figures/studies/<study>[/...]     -> tests/figures/studies/test_<study>.py
  theory/<mod>.py                         -> tests/theory/test_<mod>.py
  cross-cutting checks (docs, examples, import cycles, bad inputs, CLI errors, the platform)
                                          -> tests/test_<what they check>.py

How: WHOLE maps a file to one destination; SPLIT maps every test of a mixed file to its destination.
A test file or a test of a split file that the tables do not name stops the script (listed), so
that tests added since are noticed. Each destination is written from its sources with the ast
module and the sources' own text (comments kept): a docstring (the sources' docstrings), the
module-level imports (deduplicated, only those used), the helpers, constants and fixtures the
moved tests need (identical ones once; the same name defined differently in two sources: the later
source's one renamed name_<source> within its moved tests, reported), then the tests in the order
of the code they exercise (grouped by the function of the module they call most, a section comment
per group; a source whose tests share a module-level random generator keeps its order and is
never split). Exact duplicates (the same test after renaming) are dropped and reported; other test
name collisions are renamed name_<source> and reported. `Path(__file__)...parent` chains are fixed
for the new depth; imports of one test module by another are pointed at the new module. The
references to test files in docs/, README.md, theory/, lwsim/, tools/, examples/ and benchmarks/
are rewritten ("tests/old.py::test_x" -> "tests/new.py::test_x'"). pytest runs with
--import-mode=importlib and pythonpath=["tests"] (pyproject.toml), so that same-named files in
different folders coexist and `from cellcases import ...` works from any folder.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import io
import json
import re
import sys
import tokenize
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))                    # this checkout's lwsim and theory
TESTS = ROOT / "tests"
SHARED = {"conftest.py", "cellcases.py"}          # stay where they are, importable as before

# ------------------------------------------------------------------------------------------------
# the mapping: whole files
# ------------------------------------------------------------------------------------------------
WHOLE = {
    # added since the script was written (issue 41 items 2-6)
    "test_config.py": "figures/test_config.py",
    "test_new_conventions_data.py": "test_conventions.py",
    "test_new_cell_registry.py": "cells/test_registry.py",
    "test_new_provenance_delay.py": "figures/studies/test_delay.py",
    "test_new_provenance_behaviour.py": "figures/studies/test_behaviour.py",
    "test_new_provenance_findings.py": "figures/test_findings.py",
    # analyze
    "test_analyze_onepass.py": "analyze/test_core.py",
    "test_mut_analyze_core.py": "analyze/test_core.py",
    "test_mut_analyze_load.py": "analyze/test_load.py",
    "test_mut_analyze_report.py": "analyze/test_report.py",
    "test_mut_analyze_cli.py": "analyze/test_main.py",
    "test_analyze_torch.py": "analyze/test_torch_models.py",      # needs torch: kept apart (importorskip)
    # backends
    "test_cupy_backend.py": "backends/test_cupy.py",
    "test_numba_backend.py": "backends/test_numba.py",
    "test_numba_fused.py": "backends/numba/test_fused.py",
    "test_numba_tuning.py": "backends/numba/test_tuning.py",
    "test_tangents_numba.py": "backends/numba/test_tangent_kernels.py",
    # cells, reference
    "test_cells_api.py": "cells/test_base.py",
    "test_cells_reference.py": "test_reference.py",
    # diagnostics (module-level random generators: these files move whole)
    "test_diagnostics_anisotropy.py": "diagnostics/test_anisotropy.py",
    "test_diagnostics_envelope.py": "diagnostics/test_envelope.py",
    "test_diagnostics_expansion.py": "diagnostics/test_expansion.py",
    "test_diagnostics_gamma.py": "diagnostics/test_gamma.py",
    "test_diagnostics_matched.py": "diagnostics/test_matched.py",
    "test_matched_instantaneous.py": "diagnostics/test_matched.py",
    "test_noise_full.py": "diagnostics/test_matched.py",
    "test_diagnostics_transport.py": "diagnostics/test_transport.py",
    "test_diagnostics_inputs.py": "test_diagnostics.py",
    "test_mut_behaviour.py": "diagnostics/test_behaviour.py",
    # figures engine
    "test_mut_common.py": "figures/test_common.py",
    "test_mut_compare.py": "figures/test_compare.py",
    "test_mut_cost.py": "figures/test_cost.py",
    "test_dry_run_reference.py": "figures/test_cost.py",
    "test_dist.py": "figures/test_dist.py",                       # needs distributed: kept apart
    "test_mut_findings_assembler.py": "figures/test_findings.py",
    "test_figures.py": "figures/test_main.py",
    "test_mut_figures_cli.py": "figures/test_main.py",
    "test_runner_cache.py": "figures/test_runcache.py",
    "test_sharp_counts.py": "figures/test_runner.py",
    "test_figure_checks.py": "figures/test_style.py",
    "test_mut_training.py": "figures/test_training.py",
    "test_mut_warmup.py": "figures/test_warmup.py",
    # studies
    "test_delay.py": "figures/studies/test_delay.py",
    "test_mut_delay.py": "figures/studies/test_delay.py",
    "test_mut_findings.py": "figures/studies/test_main.py",
    "test_mut_main_figures.py": "figures/studies/test_main.py",
    # stats
    "test_stats_decay.py": "stats/test_decay.py",
    "test_mut_stats_decay.py": "stats/test_decay.py",
    "test_stats_master.py": "stats/test_decay.py",
    "test_stats_detection.py": "stats/test_detection.py",
    "test_mut_detection.py": "stats/test_detection.py",
    "test_mut_mcculloch_table.py": "stats/test_make_mcculloch_table.py",
    "test_prediction.py": "stats/test_prediction.py",
    "test_mut_prediction.py": "stats/test_prediction.py",
    "test_stats_stable.py": "stats/test_stable.py",
    "test_mut_tailfit.py": "stats/test_tailfit.py",
    # top-level modules
    "test_optim.py": "test_optim.py",
    "test_mut_optim.py": "test_optim.py",
    "test_tasks.py": "test_tasks.py",
    "test_mut_tasks.py": "test_tasks.py",
    "test_train.py": "test_train.py",
    "test_mut_train.py": "test_train.py",
    "test_platform.py": "test_platform.py",
    # theory
    "test_theory_cells.py": "theory/test_cells.py",
    "test_mut_theory_derivations.py": "theory/test_derivations.py",
    "test_theory_expansion.py": "theory/test_expansion.py",
    "test_mut_theory_planted.py": "theory/test_planted.py",
    "test_mut_theory_report.py": "theory/test_report.py",
    "test_theory_scaling.py": "theory/test_scaling.py",
    "test_theory_stable.py": "theory/test_stable.py",
    # cross-cutting: stay at the top, named for what they check
    "test_bad_inputs.py": "test_bad_inputs.py",
    "test_bench_presets.py": "test_bench_presets.py",
    "test_cli_errors.py": "test_cli_errors.py",
    "test_docs_math.py": "test_docs_math.py",
    "test_examples.py": "test_examples.py",
    "test_import_cycles.py": "test_import_cycles.py",
    "test_one_truth.py": "test_one_truth.py",
}

# ------------------------------------------------------------------------------------------------
# the mapping: files whose tests exercise several modules, test by test
# ------------------------------------------------------------------------------------------------
SPLIT = {
    "test_new_provenance_a_checks.py": {
        "figures/studies/test_fidelity.py": [
            "test_fidelity_from_the_trained_model_and_its_optimizer", "test_f6_reads_spearman_not_pearson",
        ],
        "figures/studies/test_theory_check.py": [
            "test_theory_check_is_the_planted_check_of_its_own_law_alpha_seed",
            "test_a12_stores_measured_and_theory_from_their_own_keys",
        ],
        "figures/studies/test_conventions.py": [
            "test_conventions_each_key_from_its_own_convention",
            "test_conventions_summary_and_lines_read_each_convention",
        ],
    },
    "test_new_provenance_b.py": {
        "figures/studies/test_b_rates.py": [
            "test_s1_checkpoints_are_the_model_after_ck_updates",
            "test_s1_profiles_from_each_checkpoint_on_the_probe_stream",
            "test_b1_b3_read_each_checkpoint_and_predictor",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_s2_metrics_from_each_checkpoint_on_their_own_rows", "test_f8_reads_the_last_checkpoint_and_ai",
            "test_b4_reads_each_run_at_its_first_and_last_checkpoint",
            "test_f8_conventions_read_each_conventions_keys",
        ],
        "figures/studies/test_b_expansion.py": [
            "test_expansion_from_the_seeds_trajectory_and_weights", "test_f7_reads_the_slopes",
        ],
    },
    "test_new_provenance_main.py": {
        "figures/studies/test_main.py": [
            "test_tables_by_null_from_the_trained_model_on_held_out_rows",
            "test_decay_and_master_fits_read_f_and_their_own_table", "test_final_r2_is_the_last_validation_evaluation",
            "test_the_run_trains_with_its_own_optimizer", "test_null_view_swaps_in_every_key_of_the_variant",
            "test_f4_reads_mean_alpha_not_the_fraction", "test_f5_reads_the_nhat_slopes_not_the_nstar_ones",
            "test_f3_reads_the_tau_spread_and_the_last_window", "test_f1_f2_read_the_bic_law_and_the_seed_mean_window",
            "test_training_lines_read_a8_r2",
        ],
        "figures/studies/test_optimizers.py": [
            "test_compare_runs_use_compare_optimizers_and_seeds", "test_a10_averages_each_optimizer_over_its_own_runs",
        ],
    },
    "test_aggregates.py": {
        "diagnostics/test_profile.py": [
            "test_lr_profile_median_of_transport_norms_over_pairs",
            "test_lr_profile_predictor_pbar_is_the_mean_over_pairs",
        ],
        "diagnostics/test_anisotropy.py": [
            "test_jacobian_anisotropy_median_over_triples", "test_median_iqr_over_seeds",
        ],
        "figures/studies/test_main.py": [
            "test_seed_factors_decomposition", "test_seed_factors_counts_the_smallest_budget",
            "test_spread_over_seeds", "test_pooled_master_slope_over_cells_and_per_seed",
            "test_fig_a14_author_fit_and_pooled_per_seed",
        ],
    },
    "test_analyze.py": {
        "analyze/test_main.py": [
            "test_cli_equals_figures_pipeline", "test_cli_noise_full_equals_figures_pipeline",
        ],
        "analyze/test_load.py": [
            "test_rates_from_file_equal_hand_formula",
        ],
        "analyze/test_core.py": [
            "test_defaults_stated_and_unreliable_flagged", "test_default_grids", "test_resolve_rates",
            "test_statistic_passed_through", "test_lag_grid_trimmed_to_signal",
        ],
    },
    "test_analyze_errors.py": {
        "analyze/test_load.py": [
            "test_good_files_load", "test_missing_key", "test_extra_key", "test_layout_mismatch",
            "test_wrong_hidden_size", "test_data_D_mismatch", "test_data_nout_mismatch",
            "test_data_batch_first", "test_data_keys", "test_nan_in_weights", "test_nan_in_data",
            "test_pickled_object_array_refused", "test_torch_file_refused", "test_truncated_safetensors",
            "test_oversized_npz_header", "test_optimizer_state_missing_key",
            "test_optimizer_needs_lr_and_step", "test_layout_mismatch_lists_the_keys_found",
        ],
        "analyze/test_core.py": [
            "test_too_few_sequences",
        ],
        "analyze/test_main.py": [
            "test_cli_reports_error_and_warning", "test_cli_console_says_what_it_assumed",
        ],
    },
    "test_behaviour.py": {
        "diagnostics/test_behaviour.py": [
            "test_lag_coefficients_recover_a_planted_leaky_cell",
            "test_standard_error_matches_the_spread_over_datasets", "test_lag_coefficients_validate",
            "test_window_every_lag_recovered",
            "test_window_gap_stops_the_window_and_the_smooth_crossing_interpolates",
            "test_window_null_band_and_fraction", "test_window_signs_and_order", "test_window_validates",
        ],
        "figures/studies/test_behaviour.py": [
            "test_trainings_for_different_N_differ_only_in_the_training_set", "test_spearman_is_on_ranks",
            "test_growth_law_rule", "test_scatter_data_and_tracking_verdict",
            "test_finding9_not_reproduced_and_inconclusive", "test_smoke_runs_render_a15",
            "test_three_training_points_init_is_the_initial_parameters_with_eta",
        ],
    },
    "test_conventions_author.py": {
        "test_conventions.py": [
            "test_conventions_keyword_is_validated",
        ],
        "diagnostics/test_gamma.py": [
            "test_author_r_leaky_cells", "test_author_lstm_r_and_readout", "test_author_gru_r_and_gamma",
        ],
        "diagnostics/test_envelope.py": [
            "test_author_envelope_matches_hand_loops",
        ],
        "diagnostics/test_rates.py": [
            "test_author_source_rates_use_h_k",
        ],
        "diagnostics/test_matched.py": [
            "test_author_orientation_by_128_sequence_batches",
            "test_author_lstm_pairs_gamma_with_hidden_tangent",
        ],
        "stats/test_tailfit.py": [
            "test_author_ecf_sigma", "test_author_fit_alpha_mcculloch_uses_author_table",
        ],
        "stats/test_mcculloch.py": [
            "test_author_mcculloch_table_and_interpolation",
        ],
        "stats/test_decay_author.py": [
            "test_author_tempered_law",
        ],
        "figures/studies/test_conventions.py": [
            "test_a13_rules_and_findings_section",
        ],
    },
    "test_conventions_b.py": {
        "test_conventions.py": [
            "test_conventions_validated_everywhere",
        ],
        "diagnostics/test_expansion.py": [
            "test_author_conventions_only_for_the_authors_models", "test_frechet_author_order_and_gate_term",
        ],
        "diagnostics/test_author_b.py": [
            "test_author_jacobians_use_the_state_after_the_step",
            "test_author_jacobians_of_plain_and_leaky_are_exact", "test_reversed_products",
            "test_power_norm_estimates_the_eigenvalue_not_the_norm", "test_lower_median",
            "test_floored_metrics",
        ],
        "diagnostics/test_profile.py": [
            "test_lr_profile_author_assembly",
            "test_fit_power_counts_min_points_before_the_trim_for_the_author",
        ],
        "diagnostics/test_anisotropy.py": [
            "test_author_sampling", "test_jacobian_anisotropy_author",
            "test_gradient_covariance_author_floors_and_column_rule",
        ],
        "test_tasks.py": [
            "test_author_inputs_zero_extra_channels", "test_author_ar2", "test_fixed_batch",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_b_s2_author_protocol", "test_b6_quartile_error_bars", "test_f8_under_both_conventions",
        ],
        "figures/studies/test_b_rates.py": [
            "test_b3_uses_the_gate_product_by_default", "test_b1_predictors_at_every_checkpoint",
        ],
        "figures/studies/test_b_expansion.py": [
            "test_b7_robust_seed_filter",
        ],
    },
    "test_docs.py": {
        "test_docs.py": [
            "test_derivations_page_is_current", "test_mkdocs_build_strict", "test_reference_pattern",
            "test_nothing_refers_to_the_specification", "test_module_docstrings_cite_their_docs_page",
            "test_public_docstrings_cite_their_docs_section", "test_every_docs_citation_resolves",
            "test_docs_pages_keep_the_section_numbers", "test_every_cited_test_exists",
        ],
        "theory/test_derivations.py": [
            "test_compact_jacobians_equal_the_derivation",
            "test_compact_jacobian_gate_term_uses_previous_state",
        ],
    },
    "test_findings.py": {
        "figures/studies/test_main.py": [
            "test_f1_f2_reproduced_and_not", "test_f1_f2_inconclusive_when_law_and_growth_disagree",
            "test_f1_saturation_bound_is_ten_percent_inclusive", "test_f1_f2_need_every_seed",
            "test_exponential_growth_prediction_is_log_ratio_over_kappa_lambda", "test_f3_spearman_rule",
            "test_f3_two_cells_is_inconclusive", "test_f4_direction_and_mean_over_cells",
            "test_f4_needs_every_seed", "test_f4_one_group_missing", "test_f5_from_a5_only",
            "test_f5_per_seed_rule", "test_master_diagnosis_names_each_factor",
            "test_f5_rows_carry_the_decomposition", "test_training_lines_list_every_run",
            "test_training_lines_print_the_r2_ceiling", "test_f5_numbers_at_three_significant_digits",
        ],
        "figures/studies/test_fidelity.py": [
            "test_f6_median_rule", "test_f6_reads_the_slope_ratio_in_words",
            "test_f6_slope_ratio_words_per_range",
        ],
        "figures/studies/test_b_expansion.py": [
            "test_f7_every_slope_within_two_pm_tenth",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_f8_rule", "test_f8_median_over_seeds_and_majority",
        ],
        "figures/test_common.py": [
            "test_spread_text",
        ],
        "figures/test_findings.py": [
            "test_write_findings_table", "test_verdict_words_defined_once_at_the_top",
        ],
    },
    "test_mut_engine.py": {
        "figures/test_plan.py": [
            "test_group_runs_unknown_group_is_named",
            "test_group_runs_builds_the_group_at_the_preset_and_backend", "test_with_train_dtype",
            "test_plan_groups_sorted_and_dtype_passed", "test_train_dtype_of",
        ],
        "figures/test_runcache.py": [
            "test_paths", "test_checksum_by_hand", "test_save_record_by_hand",
            "test_profile_and_elapsed_absent_or_unreadable", "test_problem_reasons",
            "test_problem_arrays_and_success", "test_problem_refuses_pickled_arrays",
            "test_quarantine_moves_and_names_each_file", "test_load_each_case",
            "test_save_names_the_unserialisable_value", "test_good_load_warns_nothing",
        ],
        "figures/test_timing.py": [
            "test_profile_by_hand", "test_part_names_checked", "test_active_nests_and_restores",
            "test_compile_clock_by_hand", "test_compile_clock_is_installed_once",
            "test_compile_clock_installs_a_listener_on_numba_lock",
            "test_format_profile_share_below_one_second", "test_summarize",
            "test_profile_rows_count_each_run_once", "test_format_profile_by_hand",
            "test_format_profile_zero_wall_and_nothing_missing",
        ],
        "figures/test_warmup.py": [
            "test_sizes_are_numbers_and_number_lists_only", "test_warm_runs_by_hand",
            "test_warm_runs_first_group_in_name_order_sizes_an_experiment", "test_source_digest_by_hand",
            "test_marker_path_by_hand", "test_warm_batch_collects_last_lines_and_reports_each_run",
            "test_warm_up_sequential_by_hand", "test_warm_up_failure_message_and_no_marker",
            "test_warm_up_without_a_marker_folder", "test_warm_up_parallel_batches_per_kernel_family",
        ],
    },
    "test_mut_runner.py": {
        "figures/test_run.py": [
            "test_thread_env", "test_worker_thread_env_restores", "test_experiment_decorator",
            "test_run_key", "test_limit_threads", "test_failure_text",
            "test_save_result_passes_time_and_profile",
        ],
        "figures/test_worker.py": [
            "test_run_task", "test_run_task_limits_threads", "test_run_task_profile_records_parts",
        ],
        "figures/test_runner.py": [
            "test_grid_failed_message", "test_run_grid_in_process", "test_run_grid_retries_and_failures",
            "test_run_grid_argument_checks", "test_run_grid_threads_default", "test_run_grid_dask_route",
            "test_pool_execute_in_process", "test_pool_execute_spawned", "test_run_grid_progress_bar",
            "test_run_grid_saves_time_and_profile", "test_pool_execute_in_process_threads",
            "test_pool_execute_one_run_stays_here", "test_pool_execute_pool_arguments",
            "test_run_grid_default_cache_folder",
        ],
    },
    "test_mut_stats.py": {
        "stats/test_checks.py": [
            "test_as_rng_accepts_seed_zero_and_names_the_bad_type",
            "test_as_size_allows_zero_length_axes_and_names_size",
            "test_real_array_inf_rules_and_nonneg_boundary",
        ],
        "stats/test_stable.py": [
            "test_sample_sas_defaults_are_unit_scale_and_one_draw",
            "test_sample_sas_alpha_two_is_two_sin_v_sqrt_w_scaled_and_shifted",
            "test_sample_sas_alpha_three_halves_by_hand_formula", "test_stable_errors_name_the_argument",
            "test_kappa_inv_kappa_scalar_float_array_array_and_boundaries", "test_mean_scale_hand_numbers",
        ],
        "stats/test_mcculloch.py": [
            "test_iqr_theory_author_at_cauchy_and_gaussian",
            "test_alpha_from_quantiles_clips_to_alpha_lo_but_author_ignores_it",
            "test_degenerate_iqr_is_gaussian_without_warnings",
            "test_author_quantile_fit_unit_iqr_row_is_not_degenerate",
            "test_bootstrap_quantiles_reach_the_sample_ends_and_interpolate",
            "test_bootstrap_alphas_pass_the_conventions",
            "test_iqr_theory_author_is_flat_over_the_snapped_first_step",
            "test_mcculloch_point_defaults_clip_at_one",
        ],
        "stats/test_decay_author.py": [
            "test_author_lc_grid_ends_by_hand", "test_tempered_author_recovers_exact_law_on_given_grids",
            "test_tempered_author_amplitude_overflow_is_inf",
            "test_tempered_author_keeps_first_grid_point_on_ties",
            "test_tempered_author_amplitude_threshold_is_strict_at_709",
            "test_tempered_author_casts_inputs_to_float64",
        ],
    },
    "test_mut_studies_findings.py": {
        "figures/studies/test_behaviour.py": [
            "test_spearman_filters_pairs_with_a_non_finite_side_and_averages_ties",
            "test_growth_law_flat_boundary_and_floor", "test_growth_law_numbers_by_hand",
            "test_growth_law_power_needs_two_positive_points_at_distinct_N",
            "test_growth_law_indistinguishable_within_the_ratio",
            "test_tracking_pooled_per_seed_and_within_N", "test_verdict_boundaries",
            "test_verdict_which_null_is_better", "test_f9_rows_and_rule_whole",
            "test_f9_without_training_points", "test_spearman_reads_none_as_missing",
            "test_growth_law_a_tie_of_two_exact_fits_is_not_indistinguishable",
            "test_f9_growth_row_formats_nan_and_small_rss",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_f8_verdict_rule_boundaries", "test_last_mu_takes_the_last_key_and_its_last_value",
            "test_f8_conventions_rows_whole", "test_f8_conventions_without_author_values_or_mu",
            "test_f8_rows_rule_and_findings", "test_f8_reads_a_missing_mu_as_nan",
        ],
        "figures/studies/test_conventions.py": [
            "test_conventions_lines_whole", "test_conventions_lines_without_rules_or_a13",
        ],
        "figures/studies/test_main.py": [
            "test_variants_order_and_intersection",
            "test_null_view_message_names_the_run_and_the_missing_keys", "test_tables_and_mean",
            "test_null_lines_whole", "test_null_lines_without_ablations_author_or_runs",
        ],
        "figures/studies/test_fidelity.py": [
            "test_findings_by_variant_rebuilds_only_the_null_figures",
            "test_null_drawings_are_the_jobs_findings_by_variant_would_run", "test_f6_whole",
            "test_f6_reading_boundaries", "test_f6_without_finite_ratios_has_no_reading",
        ],
        "figures/studies/test_b_expansion.py": [
            "test_f7_whole",
        ],
    },
    "test_mut_study_figures.py": {
        "figures/studies/test_behaviour.py": [
            "test_a15_nulls_of_keeps_the_first_runs_order_and_only_nulls_in_every_run",
            "test_a15_collect_points_and_per_cell_seed_arrays",
            "test_a15_envelope_law_power_error_and_empty",
            "test_a15_figure_panels_scatter_legends_and_tracking", "test_a15_diagonal_reaches_at_least_one",
            "test_a15_cell_arrays_are_float64_like_the_points",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_b4_lines_medians_iqr_and_axes", "test_b4_four_tasks_three_per_row",
            "test_b5_energy_concentration_on_a_linear_axis", "test_b6_quantiles_bars_and_both_error_bars",
            "test_b6_error_bar_choice_is_the_first_runs", "test_s2_groups_by_task_then_cell_in_order",
        ],
        "figures/studies/test_conventions.py": [
            "test_a13_growth_is_the_rise_over_the_upper_half",
            "test_a13_summary_per_cell_and_rules_at_their_edges",
            "test_a13_no_rules_without_both_groups_or_with_an_unfitted_cell",
            "test_a13_figure_bands_data_and_axes", "test_a13_constants",
        ],
    },
    "test_nulls.py": {
        "stats/test_detection.py": [
            "test_snr_floor_hand_computed", "test_detection_table_snr_floor_makes_tiny_lags_undetectable",
            "test_floors_argument_checks", "test_planted_nulls_differ_in_a_known_way",
            "test_full_null_argument_checks",
        ],
        "stats/test_tailfit.py": [
            "test_ecf_tiny_iqr_author_grid_hand_case",
        ],
        "theory/test_planted.py": [
            "test_planted_checker_nulls_agree",
        ],
        "stats/test_decay.py": [
            "test_nested_exponential_verdicts", "test_nested_exponential_delta_bic_threshold_decides",
            "test_nested_exponential_ignores_intervals_on_the_box_edge",
        ],
        "figures/studies/test_main.py": [
            "test_null_view_swaps_only_the_detection_keys", "test_h_last_and_growth_tables_hand_computed",
        ],
        "figures/test_findings.py": [
            "test_findings_provenance_line",
        ],
        "stats/test_nulls.py": [
            "test_the_null_declarations",
        ],
    },
    "test_numba_blas.py": {
        "backends/numba/test_blas.py": [
            "test_gemm_on_views", "test_gemm_tn_accumulates", "test_thin_products_are_blocked_and_exact",
            "test_column_blocks_stay_under_the_small_matrix_bound_and_are_even",
            "test_empty_inner_dimension_scales_c", "test_one_row_views_with_free_strides",
            "test_non_adjacent_columns_are_refused", "test_window_steps_give_at_least_window_rows",
        ],
        "backends/numba/test_threads.py": [
            "test_a_forked_child_builds_its_own_thread_pool",
        ],
    },
    "test_optim_fused.py": {
        "test_optim.py": [
            "test_fused_adam_equals_the_numpy_reference_bit_for_bit",
            "test_fused_step_equals_torch_formula_by_hand",
            "test_non_contiguous_params_take_the_numpy_path_with_the_same_result",
            "test_amsgrad_keeps_the_running_max",
            "test_train_skips_the_finite_check_only_when_the_norm_is_finite",
        ],
        "figures/test_training.py": [
            "test_a_windows_without_the_envelope_are_the_same_tables",
            "test_init_windows_computes_once_per_input_and_ignores_only_n",
        ],
    },
    "test_presets.py": {
        "figures/test_presets.py": [
            "test_paper_is_the_final_configuration", "test_paper_v1_is_the_earlier_configuration",
            "test_quick_keeps_lwsim_defaults", "test_plan_enumerates_the_paper_presets_cheaply",
            "test_one_run_of_each_paper_preset_at_smoke_size",
        ],
        "figures/test_training.py": [
            "test_gate_init_options",
        ],
    },
    "test_runner_cli.py": {
        "figures/test_main.py": [
            "test_dry_run_counts_empty_and_partly_filled", "test_scheduler_option_and_env",
            "test_cli_unreachable_scheduler_exit_code", "test_bad_cluster_options",
        ],
        "figures/test_cost.py": [
            "test_cost_model_terms_and_generic_fallback", "test_cost_model_conventions_and_fixed_overhead",
            "test_calibration_fit_recovers_planted_rates", "test_calibration_fit_floor_on_flop_rates",
        ],
    },
    "test_runner_memory.py": {
        "test_diagnostics.py": [
            "test_diagnostic_peak_memory_does_not_grow_with_sequences",
        ],
        "figures/test_cost.py": [
            "test_dry_run_peak_memory_bound_at_final_paper_size",
        ],
    },
    "test_sharp_aggregates.py": {
        "figures/studies/test_main.py": [
            "test_seed_factors_kappa_median_and_range_skewed",
            "test_fig_a14_summary_is_the_spread_over_three_unequal_seeds",
        ],
        "stats/test_decay.py": [
            "test_fit_master_window_averages_seeds_arithmetically",
        ],
        "figures/studies/test_b_anisotropy.py": [
            "test_finding8_majority_ties_and_halves", "test_f8_conventions_rows_and_the_change_line",
            "test_b4_median_and_iqr_over_seeds", "test_b6_quartiles_of_four_seeds_and_both_error_bars",
        ],
        "figures/test_common.py": [
            "test_spread_text_mean_not_median",
        ],
        "figures/studies/test_conventions.py": [
            "test_a13_summary_seed_means_and_rules",
        ],
        "figures/studies/test_b_expansion.py": [
            "test_b7_robust_fences_are_inclusive",
        ],
        "figures/studies/test_b_rates.py": [
            "test_b1_author_mu_and_predictors_are_seed_means",
        ],
    },
    "test_sharp_author.py": {
        "diagnostics/test_anisotropy.py": [
            "test_cut_off_metrics_with_fewer_energy_values_than_singular_values",
            "test_jacobian_anisotropy_author_ce_over_the_first_n_energy_values",
            "test_gradient_covariance_author_participation_ratio",
        ],
        "diagnostics/test_envelope.py": [
            "test_author_envelope_lambda_statistics_counts_and_per_neuron_means",
        ],
        "diagnostics/test_profile.py": [
            "test_lr_profile_author_medians_pairs_and_failed_fit",
        ],
    },
    "test_sharp_casts.py": {
        "cells/test_base.py": [
            "test_with_dtype_keeps_every_option_of_every_cell",
        ],
        "test_train.py": [
            "test_astype_keeps_optimizer_options_checkpoints_and_record",
        ],
        "analyze/test_load.py": [
            "test_analyze_loader_keeps_every_option_lwsim_layout", "test_analyze_loader_keeps_constgate_s",
            "test_analyze_loader_keeps_every_option_torch_layout",
        ],
    },
    "test_sharp_profile_cost.py": {
        "figures/test_timing.py": [
            "test_profile_compilation_inside_nested_parts",
            "test_profile_other_excludes_compilation_outside_parts",
            "test_compile_clock_counts_nested_lock_holds_once",
            "test_profile_real_compilation_in_a_nested_part",
        ],
        "figures/test_cost.py": [
            "test_generic_fixed_cost_is_the_median_of_a_skewed_set",
            "test_generic_a_main_shape_without_a_main_calibration",
            "test_uncalibrated_experiment_with_a_model_is_flagged_generic",
            "test_generic_a_main_needs_every_key", "test_dry_run_table_flags_generic_and_sums_uncached",
        ],
    },
    "test_stats_errors.py": {
        "stats/test_stable.py": [
            "test_sample_sas_errors", "test_kappa_domain",
        ],
        "stats/test_tailfit.py": [
            "test_fit_alpha_errors",
        ],
        "test_stats.py": [
            "test_value_errors", "test_type_errors",
        ],
    },
    "test_stats_tailfit.py": {
        "stats/test_mcculloch.py": [
            "test_table_matches_fresh_scipy", "test_table_near_one_and_closed_forms",
            "test_order_statistic_bootstrap_matches_naive_resampling",
            "test_order_statistic_bootstrap_quantiles_small_n",
        ],
        "stats/test_tailfit.py": [
            "test_ecf_rotation_kernel_matches_direct_cos_sin",
            "test_ecf_regression_matches_spec_transcription", "test_ecf_and_mcculloch_accuracy",
            "test_bootstrap_ci_coverage_fast", "test_accuracy_full_grid_slow",
            "test_alpha_range_open_and_stable_clip", "test_reliability_rule",
            "test_selection_ecf_when_reliable_and_deterministic",
            "test_selection_falls_back_to_mcculloch_bootstrap",
            "test_selection_small_sample_defaults_to_gaussian_when_ci_is_wide",
            "test_selection_degenerate_data_defaults_to_gaussian",
            "test_mcculloch_bootstrap_sigma_equivariant_and_accurate",
            "test_ecf_branch_sigma_equivariant_and_accurate",
            "test_explicit_methods_sigma_equivariant_when_alpha_clipped",
            "test_default_gaussian_branch_sigma_equivariant_and_accurate",
        ],
    },
    "test_studies.py": {
        "figures/test_study.py": [
            "test_check_refuses_a_group_figure_or_finding_declared_twice",
            "test_check_refuses_a_figure_needing_an_undeclared_group",
            "test_study_declaration_is_consistent",
            "test_a_study_declares_its_sizes_at_every_preset", "test_check_refuses_a_sizes_key_declared_twice",
        ],
        "figures/test_studies.py": [
            "test_registry_lists_every_figure_once_in_natural_order",
            "test_every_group_builds_runs_of_registered_experiments_with_a_cost_model",
            "test_each_study_docstring_names_its_figures_and_docs",
            "test_preset_sizes_gathers_every_study_and_nothing_else",
            "test_a_toy_study_added_as_one_module_runs_at_smoke", "test_plugin_studies_name_what_is_wrong",
        ],
        "figures/test_presets.py": [
            "test_presets_module_declares_no_study_sizes",
        ],
    },
    "test_theory_planted.py": {
        "theory/test_planted.py": [
            "test_measured_window_matches_derived", "test_defaults_match_within_one_lag_step",
            "test_mutation_alpha_for_kappa_in_theory_fails", "test_mutation_alpha_for_kappa_fails_broadly",
            "test_mutation_wrong_envelope_law_fails", "test_mutation_detection_rule_fails",
            "test_mutation_gaussian_tail_fit_fails", "test_planted_samples_shape_mean_and_determinism",
            "test_choose_grid_spans_lags_with_margin",
            "test_growth_fit_recovers_exponent_of_exact_grid_window",
            "test_exponent_matches_sympy_and_tolerance_values",
        ],
        "figures/studies/test_theory_check.py": [
            "test_a_theory_experiment_keys",
        ],
    },
    "test_timing.py": {
        "figures/test_timing.py": [
            "test_parts_nested_and_other_add_up_to_wall", "test_compilation_is_its_own_part",
            "test_part_without_profile_is_a_no_op_and_names_are_checked",
            "test_a_main_profile_parts_cover_the_run", "test_profile_stored_with_the_run_and_summed",
            "test_summarize_and_table_numbers", "test_compile_clock_cpu_never_negative_across_threads",
        ],
        "figures/test_main.py": [
            "test_cli_profile_prints_the_table",
        ],
        "figures/test_plan.py": [
            "test_train_dtype_override_and_findings_section",
        ],
    },
    "test_train_float32.py": {
        "test_train.py": [
            "test_float32_training_is_deterministic_and_matches_float64",
            "test_float32_numba_equals_numpy_reference_training_to_float32_accuracy",
            "test_astype_casts_once_and_rebuilds_the_optimizer",
        ],
        "figures/test_training.py": [
            "test_presets_train_in_float32_and_diagnose_in_float64",
        ],
    },
    "test_warmup.py": {
        "figures/test_warmup.py": [
            "test_warm_runs_are_small_and_keep_the_options", "test_warm_runs_rejects_bad_input",
            "test_warm_up_says_it_once_then_skips",
            "test_warm_up_silent_without_progress_and_no_marker_after_failure",
            "test_bench_first_run_reads_the_warm_up_line", "test_first_run_estimate_is_the_readmes_number",
        ],
        "figures/test_drawing.py": [
            "test_drawing_bar_names_each_figure",
            "test_draw_all_runs_the_studies_drawings_after_the_figures", "test_draw_all_bar",
            "test_draw_all_in_the_spawned_pool",
        ],
        "figures/test_run.py": [
            "test_worker_thread_env_sets_and_restores",
        ],
    },
    "test_window.py": {
        "test_window.py": [
            "test_analyze_and_the_studies_give_the_same_window_under_every_null",
            "test_the_chain_and_its_windows", "test_detect_needs_the_float32_pass_for_the_float32_nulls",
            "test_the_window_reads_every_field_of_its_table_and_the_chain_keeps_its_float32_pass",
            "test_the_defaults_are_the_statistics_own",
        ],
        "analyze/test_core.py": [
            "test_analyze_nulls_option_errors",
        ],
    },
}

# ------------------------------------------------------------------------------------------------
# what each destination tests (for the docstring and the order of the tests); None: cross-cutting
# ------------------------------------------------------------------------------------------------
SPECIAL_TARGETS = {
    "test_conventions.py": "lwsim/conventions.py",
    "test_diagnostics.py": "lwsim/diagnostics",
    "test_stats.py": "lwsim/stats",
    "analyze/test_main.py": "lwsim/analyze/__main__.py",
    "analyze/test_torch_models.py": "lwsim/analyze",
    "figures/test_main.py": "lwsim/figures/__main__.py",
    "figures/test_studies.py": "lwsim/figures/studies/__init__.py",
    "backends/test_numba.py": "lwsim/backends/numba",
}
CROSS_CUTTING = {"test_bad_inputs.py", "test_bench_presets.py", "test_cli_errors.py", "test_docs.py",
                 "test_docs_math.py", "test_examples.py", "test_import_cycles.py", "test_one_truth.py"}
# modules a module-level pytest.importorskip may name in a file merged with others: hard dependencies
# of lwsim (pyproject.toml), so the guard never skips the other sources' tests
CORE_MODULES = {"numba", "safetensors.numpy", "theory.__main__"}
# references to test files that are not a file name (rewritten as text)
LITERAL_REFERENCES = {"tests/test_theory_*.py": "tests/theory/test_*.py"}
# text edits of the written tests forced by the layout (old -> new; stop if neither is found)
FIXUPS = {
    "test_docs.py": [
        ('for p in (ROOT / "tests").glob("test_*.py"):\n        defs[p.name] = ',
         'for p in (ROOT / "tests").rglob("test_*.py"):\n        defs[p.relative_to(ROOT / "tests").as_posix()] = '),
        (r're.findall(r"tests/(test_\w+\.py)::(test_\w+)", line)',
         r're.findall(r"tests/((?:\w+/)*test_\w+\.py)::(test_\w+)", line)'),
        (r're.findall(r"tests/(test_\w+\.py)", line)', r're.findall(r"tests/((?:\w+/)*test_\w+\.py)", line)'),
    ],
}
REFERENCE_SCAN = ["README.md", "pyproject.toml", "mkdocs.yml", "docs", "theory", "lwsim", "tools", "examples",
                  "benchmarks", ".ci"]
REFERENCE_SUFFIXES = {".md", ".py", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".sh"}
THIS_TOOLS = {"relayout_tests.py", "check_relayout.py"}


class RelayoutError(SystemExit):
    pass


def fail(title, lines):
    raise RelayoutError("relayout_tests.py: " + title + "\n" + "\n".join("  " + str(x) for x in lines))


# ------------------------------------------------------------------------------------------------
# reading a source file into items (top-level statements with their own text)
# ------------------------------------------------------------------------------------------------
class Item:
    """One top-level statement of a source: its text (leading comments included) and its names."""

    def __init__(self, src, node, text, first_line):
        self.src, self.node, self.text, self.first_line = src, node, text, first_line
        self.kind = _kind(node)
        self.defines = _bound_names(node)
        self.uses = _used_names(node)
        self.name = getattr(node, "name", None)

    @property
    def is_test(self):
        return self.kind in ("def", "class") and (self.name.startswith("test") or self.name.startswith("Test"))


def _kind(node):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "import"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "def"
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        return "assign"
    return "setup"                       # expression statements, try/if/for blocks: run as written


def _bound_names(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n is not node:
            out.add(n.name)
    return out


def _used_names(node):
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)                                    # fixtures are asked for by parameter name
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)                                  # usefixtures("name"), getfixturevalue("name")
    return out


class Source:
    def __init__(self, path):
        self.path = path
        self.name = path.name
        self.tag = path.stem.removeprefix("test_").removeprefix("mut_")
        self.text = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.text)
        self.docstring = ast.get_docstring(self.tree, clean=True) or ""
        lines = self.text.splitlines(keepends=True)
        body = list(self.tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            prev_end = body[0].end_lineno
            body = body[1:]
        else:
            prev_end = 0
        self.items = []
        for node in body:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            lead = "".join(lines[prev_end:start - 1]).strip("\n")
            own = "".join(lines[start - 1:node.end_lineno]).rstrip("\n")
            text = (lead + "\n" if lead else "") + own
            self.items.append(Item(self, node, text, start - (lead.count("\n") + 1 if lead else 0)))
            prev_end = node.end_lineno
        tail = "".join(lines[prev_end:]).strip("\n")
        if tail and self.items:
            self.items[-1].text += "\n" + tail
        self.tests = [it for it in self.items if it.is_test]
        self.by_name = {}
        for it in self.items:
            for n in it.defines:
                self.by_name.setdefault(n, []).append(it)
        used_anywhere = set().union(*(it.uses for it in self.items)) if self.items else set()
        for it in self.items:
            it.side_effect_import = it.kind == "import" and not (it.defines & used_anywhere)
        # a module-level random generator shared by the tests: its order must stay, it moves whole
        self.shares_rng = any(it.kind == "assign" and isinstance(it.node.value, ast.Call)
                              and getattr(it.node.value.func, "attr", getattr(it.node.value.func, "id", ""))
                              in ("default_rng", "RandomState") for it in self.items)


def inline_test_imports(sources):
    """``from test_x import a, b`` at module level: a and b (and what they need) become the
    importing file's own helpers, copied from test_x, so that each new file stands alone."""
    for _ in range(len(sources)):
        changed = False
        for src in sources.values():
            items = []
            for it in src.items:
                mod = it.node.module if isinstance(it.node, ast.ImportFrom) else None
                if not (mod and re.fullmatch(r"(tests\.)?test_\w+", mod)):
                    items.append(it)
                    continue
                other = sources.get(mod.removeprefix("tests.") + ".py")
                if other is None or any(a.asname for a in it.node.names) or any(
                        isinstance(x.node, ast.ImportFrom) and x.node.module and
                        re.fullmatch(r"(tests\.)?test_\w+", x.node.module) for x in other.items):
                    fail(f"tests/{src.name}: cannot inline {ast.unparse(it.node)}", [])
                fake = ast.parse("\n".join(a.name for a in it.node.names))
                need = closure_of_names(other, {a.name for a in it.node.names})
                for x in other.items:
                    if x in need and not any(x.text == y.text for y in items):
                        copy = Item(src, x.node, x.text, x.first_line)
                        copy.side_effect_import = False
                        items.append(copy)
                del fake
                changed = True
            src.items = items
            src.by_name = {}
            for it in src.items:
                for n in it.defines:
                    src.by_name.setdefault(n, []).append(it)
        if not changed:
            return


def closure_of_names(src, names):
    """The items of ``src`` (imports included) that define ``names``, and what those need."""
    need, todo = [], list(names)
    seen = set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for d in src.by_name.get(n, []):
            if d not in need and not d.is_test:
                need.append(d)
                todo.extend(d.uses)
    return need


# ------------------------------------------------------------------------------------------------
# the plan: which test goes where
# ------------------------------------------------------------------------------------------------
def plan(sources):
    """{destination: [(source, [test items])]} in the order of WHOLE/SPLIT; stops on anything unmapped."""
    present = {p.name for p in TESTS.glob("test_*.py")}
    mapped = set(WHOLE) | set(SPLIT)
    unmapped = sorted(present - mapped)
    missing = sorted(mapped - present)
    if unmapped or missing:
        fail("the mapping does not match tests/ (add or remove these files in WHOLE/SPLIT):",
             [f"unmapped: tests/{f}" for f in unmapped] + [f"mapped but absent: tests/{f}" for f in missing])
    dest = defaultdict(lambda: defaultdict(list))
    problems = []
    order = list(WHOLE) + list(SPLIT)
    for name in sorted(present, key=order.index):
        src = sources[name]
        if name in WHOLE:
            for t in src.tests:
                dest[WHOLE[name]][name].append(t)
            continue
        where = {t: d for d, ts in SPLIT[name].items() for t in ts}
        for t in src.tests:
            if t.name not in where:
                problems.append(f"tests/{name}::{t.name} (not in SPLIT[{name!r}])")
            else:
                dest[where[t.name]][name].append(t)
        for t in sorted(set(where) - {t.name for t in src.tests}):
            problems.append(f"tests/{name}::{t} (in SPLIT but not in the file)")
        if src.shares_rng and len(SPLIT[name]) > 1:
            problems.append(f"tests/{name}: shares a module-level random generator; map it whole")
    if problems:
        fail("tests the mapping does not place:", problems)
    return {d: [(sources[s], ts) for s, ts in per.items()] for d, per in sorted(dest.items())}


# ------------------------------------------------------------------------------------------------
# what a destination tests: its module's functions, in the order of the code
# ------------------------------------------------------------------------------------------------
def target_of(dest):
    if dest in SPECIAL_TARGETS:
        return SPECIAL_TARGETS[dest]
    if dest in CROSS_CUTTING or dest in ("test_platform.py", "test_window.py", "test_reference.py"):
        base = {"test_platform.py": "lwsim/platform.py", "test_window.py": "lwsim/window.py",
                "test_reference.py": "lwsim/reference.py"}.get(dest)
        return base
    parts = dest.split("/")
    stem = parts[-1].removeprefix("test_").removesuffix(".py")
    if parts[0] == "theory":
        return f"theory/{stem}.py"
    folder = "/".join(["lwsim"] + parts[:-1])
    for cand in (f"{folder}/{stem}.py", f"{folder}/{stem}"):
        if (ROOT / cand).exists():
            return cand
    return None


def target_defs(target):
    """Top-level function and class names of the target module (package: all its files), in order."""
    if target is None:
        return []
    p = ROOT / target
    files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
    names = []
    for f in files:
        for node in ast.parse(f.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in names:
                names.append(node.name)
    return names


def _identifiers(node):
    c = Counter()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            c[n.id] += 1
        elif isinstance(n, ast.Attribute):
            c[n.attr] += 1
    return c


def behaviour_order(tests, defs):
    """The tests sorted by the function of the target they call most (ties: earlier in the code);
    a test that calls none stays after the test before it; a source sharing a random generator
    keeps its order. Returns [(group name or None, test item)]."""
    rank = {n: i for i, n in enumerate(defs)}
    keyed = []
    last = defaultdict(lambda: -1)
    for pos, t in enumerate(tests):
        ids = _identifiers(t.node)
        hits = [(-c, rank[n], n) for n, c in ids.items() if n in rank]
        if hits:
            _, r, g = min(hits)
        else:
            r, g = last[t.src.name], None
        if t.src.shares_rng:
            r = max(r, last[t.src.name])
        last[t.src.name] = r
        keyed.append((r, pos, g, t))
    keyed.sort(key=lambda k: (k[0], k[1]))
    groups = {}
    for r, _, g, t in keyed:                # a group is named by the function that defines its rank
        if g is not None:
            groups.setdefault(r, g)
    return [(groups.get(r) if r >= 0 else None, t) for r, _, g, t in keyed]


# ------------------------------------------------------------------------------------------------
# renaming a name inside an item's text (every Name, arg, def and class of that name)
# ------------------------------------------------------------------------------------------------
def rename_in(item_text, renames):
    if not renames:
        return item_text
    tree = ast.parse(item_text)
    spots = []
    lines = item_text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))

    def at(lineno, col):
        return offs[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8"))

    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in renames:
            spots.append((at(n.lineno, n.col_offset), n.id))
        elif isinstance(n, ast.arg) and n.arg in renames:
            spots.append((at(n.lineno, n.col_offset), n.arg))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in renames:
            line = lines[n.lineno - 1]
            m = re.search(r"\b(?:def|class)\s+(" + re.escape(n.name) + r")\b", line)
            spots.append((offs[n.lineno - 1] + m.start(1), n.name))
        elif isinstance(n, ast.alias) and (n.asname or n.name) in renames and n.asname:
            line = lines[n.lineno - 1]
            m = re.search(r"\bas\s+(" + re.escape(n.asname) + r")\b", line[n.col_offset:])
            spots.append((offs[n.lineno - 1] + n.col_offset + m.start(1), n.asname))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("usefixtures", "getfixturevalue"):
            for a in n.args:
                if isinstance(a, ast.Constant) and a.value in renames:
                    spots.append((at(a.lineno, a.col_offset) + 1, a.value))
    out = item_text
    for pos, old in sorted(set(spots), reverse=True):
        assert out[pos:pos + len(old)] == old, (old, out[pos:pos + 30])
        out = out[:pos] + renames[old] + out[pos + len(old):]
    return out


# ------------------------------------------------------------------------------------------------
# imports: merged, deduplicated, grouped
# ------------------------------------------------------------------------------------------------
def import_bindings(node):
    """[(bound name, statement key)] of one import statement: key says exactly what is bound."""
    out = []
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out.append((a.asname, ("import", a.name, a.asname)))
            else:
                out.append((a.name.split(".")[0], ("import", a.name, None)))
    else:
        mod = "." * node.level + (node.module or "")
        for a in node.names:
            out.append((a.asname or a.name, ("from", mod, a.name, a.asname)))
    return out


def _binding_target(key):
    """What a binding refers to (for telling equal bindings from clashing ones): for lwsim and
    theory, the object itself (``from lwsim.figures import Run`` = ``from lwsim.figures.run import Run``)."""
    if key[0] == "import":
        what = ("module", key[1] if key[2] else key[1].split(".")[0])
    else:
        what = ("attr", key[1], key[2])
    if what[1].split(".")[0] in ("lwsim", "theory"):
        import importlib
        try:
            obj = importlib.import_module(what[1])
            if what[0] == "attr":
                obj = getattr(obj, what[2]) if hasattr(obj, what[2]) else importlib.import_module(f"{what[1]}.{what[2]}")
            return ("object", id(obj))
        except Exception:                     # noqa: BLE001 - unresolvable: compare the text
            return what
    return what


STDLIB = set(sys.stdlib_module_names)


def format_imports(keys):
    future = sorted(k for k in keys if k[0] == "from" and k[1] == "__future__")
    rest = [k for k in keys if k not in future]

    def group(k):
        top = k[1].split(".")[0]
        if top in STDLIB:
            return 0
        if top in ("lwsim", "theory"):
            return 2
        if top in ("cellcases", "conftest", "tests") or top.startswith("test_"):
            return 3
        return 1

    blocks = []
    if future:
        blocks.append(["from __future__ import " + ", ".join(k[2] for k in future)])
    for g in range(4):
        ks = [k for k in rest if group(k) == g]
        plain = sorted({(k[1], k[2]) for k in ks if k[0] == "import"}, key=lambda x: (x[0], x[1] or ""))
        froms = defaultdict(set)
        for k in ks:
            if k[0] == "from":
                froms[k[1]].add((k[2], k[3]))
        lines = [f"import {m}" + (f" as {a}" if a else "") for m, a in plain]
        for m in sorted(froms):
            names = ", ".join(n + (f" as {a}" if a else "") for n, a in sorted(froms[m], key=lambda x: (x[0], x[1] or "")))
            line = f"from {m} import {names}"
            if len(line) > 110:
                line = f"from {m} import (\n    " + ",\n    ".join(
                    n + (f" as {a}" if a else "") for n, a in sorted(froms[m], key=lambda x: (x[0], x[1] or ""))) + ",\n)"
            lines.append(line)
        if lines:
            blocks.append(lines)
    return "\n\n".join("\n".join(b) for b in blocks)


# ------------------------------------------------------------------------------------------------
# building one destination
# ------------------------------------------------------------------------------------------------
def closure(src, tests):
    """The module-level items of ``src`` that ``tests`` need, in source order (imports separately)."""
    need, todo = set(), list(tests)
    names_done = set()
    while todo:
        it = todo.pop()
        for n in it.uses:
            if n in names_done:
                continue
            names_done.add(n)
            for d in src.by_name.get(n, []):
                if d not in need and not d.is_test:
                    need.add(d)
                    todo.append(d)
    for it in src.items:                 # autouse fixtures, setup statements, side-effect imports
        if (it.kind == "setup" or (it.kind == "import" and it.side_effect_import)
                or (it.kind == "def" and "autouse=True" in it.text.split("def ", 1)[0])):
            if it not in need:
                need.add(it)
                for n in it.uses:
                    for d in src.by_name.get(n, []):
                        if not d.is_test and d not in need:
                            todo.append(d)
                while todo:
                    x = todo.pop()
                    if x in need:
                        continue
                    need.add(x)
                    for n in x.uses:
                        for d in src.by_name.get(n, []):
                            if not d.is_test and d not in need:
                                todo.append(d)
    return [it for it in src.items if it in need and not it.is_test]


def _norm(node, name=None):
    node = ast.parse(ast.unparse(node)).body[0]
    if name is not None and hasattr(node, "name"):
        node.name = ""
    return ast.dump(node, annotate_fields=False)


class Report:
    def __init__(self):
        self.rows = []            # (old file, new file, tests)
        self.renamed = []         # (dest, source, old, new, why)
        self.dropped = []         # (dest, source, test, kept test)
        self.nodes = {}           # "old/file.py::name" -> "new/file.py::name"
        self.primary = {}         # old file -> new file with most of its tests


def build(dest, parts, report, moves):
    depth = dest.count("/")
    target = target_of(dest)
    defs = target_defs(target)
    # 1. what each source brings
    chosen = []                                        # (source, helpers, imports, tests)
    for src, tests in parts:
        helpers = closure(src, tests)
        imports = [it for it in helpers if it.kind == "import"]
        helpers = [it for it in helpers if it.kind != "import"]
        chosen.append((src, helpers, imports, tests))
    multi = len(parts) > 1
    # 2. names: equal definitions once, clashing ones renamed in the later source (to a fixed point:
    #    a helper equal in text but calling a renamed helper is not equal)
    renames = {}
    while True:
        owner, log, new_renames = {}, [], defaultdict(dict)
        for src, helpers, imports, tests in chosen:
            cur = renames.get(src.name, {})
            for it in imports:
                for name, key in import_bindings(it.node):
                    if name in it.uses or it.side_effect_import or _used_by(name, helpers + tests):
                        _claim(name, ("import", _binding_target(key)), src, owner, new_renames, log, None)
            for it in helpers:
                norm = _norm_text(rename_in(it.text, cur))
                for name in sorted(it.defines):
                    _claim(name, ("def", norm), src, owner, new_renames, log, None)
            for t in tests:
                _claim(t.name, ("test", None), src, owner, new_renames, log, "test")
        new_renames = {k: dict(v) for k, v in new_renames.items()}
        if new_renames == renames:
            break
        renames = new_renames
    renames = defaultdict(dict, renames)
    RENAMES[dest] = renames                          # fix_text: a helper imported by name may be renamed
    import_keys = []
    # imports after renaming
    for src, helpers, imports, tests in chosen:
        for it in imports:
            for name, key in import_bindings(it.node):
                if not (name in it.uses or it.side_effect_import or _used_by(name, helpers + tests)):
                    continue
                new = renames[src.name].get(name)
                if new:
                    key = (key[0], key[1], key[2], new) if key[0] == "from" else ("import", key[1], new)
                if _is_test_module(key):
                    continue                            # handled with the test-module imports below
                if key not in import_keys:
                    import_keys.append(key)
    # 3. guards: a module-level skip must not reach another source's tests
    if multi:
        for src, helpers, imports, tests in chosen:
            for it in helpers:
                for m in re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", it.text):
                    if m not in CORE_MODULES:
                        fail(f"{dest}: tests/{src.name} skips on {m!r} at module level; keep it apart", [it.text[:80]])
                if "pytestmark" in it.defines:
                    fail(f"{dest}: tests/{src.name} sets pytestmark; keep it apart", [])
    # 4. texts
    helper_texts, seen_norm = [], set()
    for src, helpers, imports, tests in chosen:
        for it in helpers:
            text = rename_in(it.text, renames[src.name])
            norm = _norm_text(text)
            if norm in seen_norm:
                continue
            seen_norm.add(norm)
            helper_texts.append(fix_text(text, depth, src, dest, moves))
    all_tests = [t for _, _, _, ts in chosen for t in ts]
    ordered = behaviour_order(all_tests, defs)
    test_blocks, kept_norm, last_group = [], {}, object()
    n_groups = len({g for g, _ in ordered if g})
    for group, t in ordered:
        src = t.src
        new_name = renames[src.name].get(t.name, t.name)
        text = fix_text(rename_in(t.text, renames[src.name]), depth, src, dest, moves)
        norm = _norm(ast.parse(text).body[0], name=True)
        old_id = f"tests/{src.name}::{t.name}"
        if norm in kept_norm:
            keep = kept_norm[norm]
            report.dropped.append((dest, src.name, t.name, keep))
            report.nodes[old_id] = f"tests/{dest}::{keep}"
            continue
        kept_norm[norm] = new_name
        report.nodes[old_id] = f"tests/{dest}::{new_name}"
        if n_groups > 1 and group != last_group and group is not None:
            test_blocks.append(f"# {'-' * 94}\n# {group}\n# {'-' * 94}")
        if group is not None:
            last_group = group
        test_blocks.append(text)
    # 5. the file
    doc = docstring_for(dest, target, [src for src, *_ in chosen])
    body = [doc, format_imports(import_keys)] + helper_texts + test_blocks
    out = "\n\n\n".join(b for b in body if b.strip()) + "\n"
    out = "\n".join(line.rstrip() for line in out.split("\n"))
    for old, new in FIXUPS.get(dest, []):
        if old in out:
            out = out.replace(old, new)
        elif new not in out:
            fail(f"{dest}: a fix-up no longer applies (update FIXUPS):", [old])
    ast.parse(out)
    dropped = {(s, n) for d, s, n, _ in report.dropped if d == dest}
    report.renamed += [(dest, s, o, n, why) for s, o, n, why in log if (s, o) not in dropped]
    for src, helpers, imports, tests in chosen:
        report.rows.append((src.name, dest, len(tests) - sum(1 for t in tests if (src.name, t.name) in dropped)))
    return out


def _used_by(name, items):
    return any(name in it.uses for it in items)


def _claim(name, what, src, owner, renames, log, kind):
    """Register ``name`` defined by ``src``; a different definition of a taken name is renamed."""
    if name not in owner:
        owner[name] = (src, what)
        return
    first_src, first_what = owner[name]
    if first_src is src or (first_what == what and what[0] != "test"):
        return
    if what[0] != "test" and ("alt", name, what) in owner:       # the same clashing definition again
        renames[src.name][name] = owner[("alt", name, what)]
        return
    new = f"{name}_{src.tag}"
    while new in owner:
        new += "_"
    renames[src.name][name] = new
    owner[new] = (src, what)
    owner[("alt", name, what)] = new
    log.append((src.name, name, new,
                "test name taken" if kind == "test" else f"defined differently in tests/{first_src.name}"))


def _norm_text(text):
    return ast.dump(ast.parse(text), annotate_fields=False)


def _is_test_module(key):
    mod = key[1]
    return mod.startswith("tests.test_") or mod.startswith("test_")


RENAMES: dict = {}     # destination → {source file: {old name: new name}} (set while writing it)


def fix_text(text, depth, src, dest, moves):
    """Path(__file__) chains for the new depth; imports of other test modules to their new place."""
    if depth:
        def parents(m):
            k = m.group(1).count(".parent") if m.group(1) else None
            if m.group(2) is not None:
                n = int(m.group(2)) + depth
            else:
                n = k - 1 + depth
            return f"__file__).resolve().parents[{n}]"
        text = re.sub(r"__file__\)\.resolve\(\)(?:((?:\.parent(?![s\w]))+)|\.parents\[(\d+)\])", parents, text)
    def imp(m):
        indent, mod, names = m.group(1), m.group(2), m.group(3)
        old = mod.removeprefix("tests.") + ".py"
        if old not in moves:
            return m.group(0)
        to = {n.strip().split(" as ")[0]: moves[old].get(n.strip().split(" as ")[0]) for n in names.split(",")}
        dests = {d for d, _ in to.values() if d}
        if len(dests) != 1 or None in [v for v in to.values()]:
            fail(f"{dest}: cannot place the import of tests/{old}", [m.group(0)])
        (d,) = dests
        new_names = ", ".join(new for _, new in to.values())
        if d == dest:                          # the names are this module's own now (perhaps renamed)
            line = f"{indent}# ({names}: from {mod}, defined in this module since the relayout)"
            renamed = RENAMES.get(dest, {}).get(old, {})
            return line + "".join(f"\n{indent}{n} = {renamed[n]}" for n in to if renamed.get(n, n) != n)
        return f"{indent}from tests.{d.removesuffix('.py').replace('/', '.')} import {new_names}"
    text = re.sub(r"(?m)^([ \t]*)from ((?:tests\.)?test_\w+) import ([\w, ]+?)(?=\s*(?:#.*)?$)", imp, text)
    return text


def docstring_for(dest, target, sources):
    what = f"Tests of {target}" if target else "Checks across the project"
    paras = [what + (" (laid out like the code: docs/testing.md)." if target else
                     " (cross-cutting; docs/testing.md).")]
    for s in sources:
        d = s.docstring.strip()
        if d and d not in paras:
            paras.append(d)
    text = "\n\n".join(paras).replace('"""', "'''").replace("\\", "\\\\")
    return '"""' + text + '"""'


# ------------------------------------------------------------------------------------------------
# references to test files elsewhere in the project
# ------------------------------------------------------------------------------------------------
def rewrite_references(report, moves, dry_run):
    pat = re.compile(r"tests/(test_\w+\.py)(?:::(test_\w+))?")
    changed = []

    def sub(m):
        f, name = m.group(1), m.group(2)
        if f not in moves:
            return m.group(0)
        if name:
            new = report.nodes.get(f"tests/{f}::{name}")
            return new if new else m.group(0)
        return f"tests/{report.primary[f]}"

    for top in REFERENCE_SCAN:
        p = ROOT / top
        files = [p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else []
        for f in files:
            if not f.is_file() or f.suffix not in REFERENCE_SUFFIXES or f.name in THIS_TOOLS \
                    or "__pycache__" in f.parts:
                continue
            try:
                text = f.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            new = pat.sub(sub, text)
            for old, lit in LITERAL_REFERENCES.items():
                new = new.replace(old, lit)
            if new != text:
                changed.append(f.relative_to(ROOT).as_posix())
                if not dry_run:
                    f.write_text(new, encoding="utf-8")
    return changed


def configure_pytest(dry_run):
    p = ROOT / "pyproject.toml"
    text = p.read_text(encoding="utf-8")
    head = "[tool.pytest.ini_options]\n"
    if head not in text:
        fail("pyproject.toml has no [tool.pytest.ini_options]", [])
    add = []
    if "--import-mode=importlib" not in text:
        add.append('addopts = "--import-mode=importlib"    # same-named test files in different folders')
    if not re.search(r"(?m)^pythonpath\s*=", text):
        add.append('pythonpath = ["tests"]                # `from cellcases import ...` from any folder')
    if add and not dry_run:
        p.write_text(text.replace(head, head + "\n".join(add) + "\n", 1), encoding="utf-8")
    return bool(add)


# ------------------------------------------------------------------------------------------------
def run(dry_run=False, quiet=False):
    present = sorted(TESTS.glob("test_*.py"))
    sources = {p.name: Source(p) for p in present}
    inline_test_imports(sources)
    layout = plan(sources)
    report = Report()
    moves = defaultdict(dict)          # old file -> {old name: (dest, new name)} (filled in two passes)
    # first pass: names only (for imports between test modules and for references)
    for dest, parts in layout.items():
        for src, tests in parts:
            for it in src.items:
                if not it.is_test:
                    for n in it.defines:
                        moves[src.name].setdefault(n, (dest, n))
            for t in tests:
                moves[src.name][t.name] = (dest, t.name)
    outputs = {}
    for dest, parts in layout.items():
        outputs[dest] = build(dest, parts, report, moves)
    # the names a helper or test got in its destination (renames), for imports between test modules
    for dest, src_name, old, new, _ in report.renamed:
        if moves[src_name].get(old, (None,))[0] == dest:
            moves[src_name][old] = (dest, new)
    outputs = {dest: build(dest, parts, Report(), moves) for dest, parts in layout.items()}
    per_file = defaultdict(Counter)
    for old, dest, n in report.rows:
        per_file[old][dest] += n
    report.primary = {old: c.most_common(1)[0][0] for old, c in per_file.items()}
    for old in sources:
        report.primary.setdefault(old, WHOLE.get(old) or next(iter(SPLIT[old])))
    # write
    written = sorted(outputs)
    removed = sorted(set(sources) - set(written))
    if not dry_run:
        for name in removed:
            (TESTS / name).unlink()
        for dest, text in outputs.items():
            path = TESTS / dest
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    refs = rewrite_references(report, moves, dry_run)
    cfg = configure_pytest(dry_run)
    if not quiet:
        print_summary(report, per_file, refs, cfg, dry_run)
    return report


def print_summary(report, per_file, refs, cfg, dry_run):
    print(f"{'old file':36s} -> new file(s) (tests moved)")
    for old in sorted(per_file):
        dests = ", ".join(f"{d} ({n})" for d, n in sorted(per_file[old].items(), key=lambda x: (-x[1], x[0])))
        print(f"  {old:34s} -> {dests}")
    news = Counter()
    for _, dest, n in report.rows:
        news[dest] += n
    print(f"\n{len(per_file)} old files -> {len(news)} new files; {sum(news.values())} tests "
          f"({len(report.dropped)} exact duplicates dropped)")
    if report.dropped:
        print("\nexact duplicates dropped (same test after renaming):")
        for dest, src, name, keep in report.dropped:
            print(f"  tests/{src}::{name} = tests/{dest}::{keep}")
    if report.renamed:
        print("\nrenamed (the name was taken in the destination):")
        for dest, src, old, new, why in report.renamed:
            print(f"  {dest}: {old} of tests/{src} -> {new} ({why})")
    print("\nreferences rewritten in: " + (", ".join(refs) if refs else "none"))
    print("pyproject.toml pytest options: " + ("added" if cfg else "already there"))
    if dry_run:
        print("(dry run: nothing written)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    ap.add_argument("--manifest", help="write the old -> new test node ids (JSON) here")
    a = ap.parse_args(argv)
    report = run(dry_run=a.dry_run)
    if a.manifest:
        Path(a.manifest).write_text(json.dumps({"nodes": report.nodes,
                                                "dropped": [list(d) for d in report.dropped]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
