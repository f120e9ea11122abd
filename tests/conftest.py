from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# tests/ mirrors the package (tests/analysis, tests/io, ...); a test may import a helper of tests/
# or another folder's test module by name (no __init__.py: pytest's default import mode). The tests of
# graphrag_audit/graphrag/ are in tests/graphrag_tests/: a folder named graphrag on sys.path would be
# found as the graphrag package (importlib.util.find_spec), as if graphrag were installed
for _folder in (
    Path(__file__).parent,
    *sorted(p for p in Path(__file__).parent.iterdir() if p.is_dir() and p.name[0] not in "_."),
):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
SHARED_INDEXES = ROOT.parent / "shared" / "indexes"
FIXTURES = ROOT / "fixtures"


def shared_index(name: str) -> Path:
    """Path of a real index under ../shared/indexes, or skip the test with the reason."""
    path = SHARED_INDEXES / name
    if not path.is_dir():
        pytest.skip(f"real index {name!r} not available: {SHARED_INDEXES} is absent (CI provides ../shared)")
    return path


def shared_folders() -> list[str]:
    if not SHARED_INDEXES.is_dir():
        return []
    return sorted(p.name for p in SHARED_INDEXES.iterdir() if p.is_dir())


def real_index_params():
    """Parametrize over every real index; one skipped param with a reason when absent."""
    names = shared_folders()
    if not names:
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"{SHARED_INDEXES} is absent: real-index tests need ../shared/indexes beside the repo"
                ),
            )
        ]
    return names


#: The heavy tiers (pyproject.toml's markers; its addopts deselect them, .ci/run selects them).
TIERS = ("side", "emulator", "browser", "hostile", "large")

#: Tests of the ``large`` tier although their module runs by default: most tests of 1.4 s CPU or more
#: (measured per test at 3ba2f03: CLI processes at many widths, settings or terminals; stress, fuzz and
#: property runs). Cheaper tests of the same code stay in the default tier.
LARGE_TESTS = {
    "test_bounded_io.py": [
        "test_output_never_replaces_the_baseline_or_relevant_list_read",
        "test_output_never_replaces_the_settings_or_env_read",
        "test_plan_write_never_replaces_the_settings",
    ],
    "test_bundle.py": [
        "test_cli_size_limit_and_refusals_are_one_line_exit_2",
        "test_cli_writes_the_bundle_its_audit_and_readme",
    ],
    "test_cli.py": [
        "test_options_from_environment",
        "test_output_file_and_refusal_inside_index",
        "test_project_root_settings_and_timestamped_layout",
    ],
    "test_cli_color.py": ["test_no_color_on_a_terminal"],
    "test_cli_usage.py": [
        "test_a_bad_settings_value_is_one_line_naming_the_key",
        "test_an_output_file_stays_100_columns",
        "test_costs_follow_the_project_settings",
        "test_level_only_chooses_the_level_and_list_reports_lists",
        "test_no_terminal_anywhere_is_100_columns_and_columns_is_read",
        "test_only_price_in_leaves_the_output_out",
        "test_options_override_the_settings",
        "test_piped_stdout_and_stderr_follow_the_controlling_terminal",
        "test_piped_stdout_follows_the_terminal_on_stderr",
        "test_prices_turn_calls_into_a_cost_per_query",
        "test_verbs_v3_cost_at_level_2_by_hand",
    ],
    "test_diff_hypothetical.py": ["test_a_cut_path_never_starts_a_line_with_a_workflow_command"],
    "test_dynamic_audit.py": [
        "test_cli_flags_reach_the_simulation",
        "test_relevant_ids_that_are_not_communities_are_a_usage_error",
    ],
    "test_export.py": ["test_cli_warns_on_stderr_above_mermaids_limit"],
    "test_fast_paths.py": [
        "test_a_broken_nodes_table_read_last_is_still_a_one_line_error",
        "test_children_vs_parent_equals_the_set_formula",
        "test_containment_equals_the_set_formula",
        "test_the_forest_of_the_parent_column_is_the_networkx_graph",
        "test_the_levels_command_never_imports_networkx",
    ],
    "test_first_hour_output.py": [
        "test_ascii_output_footnote_markers_and_alignment",
        "test_brief_markdown",
        "test_brief_prints_the_answer_one_table_and_the_findings",
        "test_hide_hypothetical_on_a_1x_index_hides_the_2x_columns",
        "test_hide_hypothetical_on_an_index_graphrag_below_2_cannot_read",
        "test_json_and_github_ignore_brief_and_hide",
        "test_level_beyond_the_tree_says_no_row_is_marked",
        "test_plan_text_has_no_trailing_blanks",
        "test_plurals_on_a_one_community_index",
        "test_thousands_separators_in_finding_messages_everywhere",
        "test_tree_more_rows_keep_the_parent_id_at_80_columns",
    ],
    "test_html_report.py": ["test_cli_report_takes_the_dynamic_options"],
    "test_invisible_text.py": [
        "test_a_folded_word_never_starts_a_line_with_a_command",
        "test_no_raw_invisible_character_and_no_legacy_command",
        "test_text_shows_every_title_visibly",
    ],
    "test_json_schemas.py": ["test_plan_json_from_the_cli_with_write_carries_the_handoff"],
    "test_levels_screen.py": [
        "test_estimate_tokens_are_marked_approximate",
        "test_every_finding_shows_its_fix_in_text_and_html",
        "test_levels_text_at_80_columns",
        "test_no_text_units_means_null_not_zero",
        "test_the_queried_level_is_marked_without_colour",
    ],
    "test_levels_verbose.py": [
        "test_markdown_shows_the_evidence_only_with_verbose",
        "test_text_shows_the_evidence_only_with_verbose",
    ],
    "test_locate.py": ["test_cli_errors_are_one_line", "test_every_format_names_the_tables_folder"],
    "test_markdown_gfm.py": [
        "test_levels_markdown_on_github",
        "test_plan_markdown_on_github",
        "test_real_index_markdown_on_github",
    ],
    "test_markdown_privacy.py": [
        "test_cli_step_summary_is_private_unless_asked",
        "test_cli_warns_when_the_markdown_is_too_long_to_paste",
        "test_untrusted_text_stays_one_plain_text_node",
    ],
    "test_messages.py": [
        "test_a_looping_link_in_an_update_run_is_an_error",
        "test_an_unterminated_quote_in_env_is_one_line",
        "test_bundle_of_a_refused_index_names_the_source_file",
        "test_no_secret_in_any_command_error",
    ],
    "test_output_encoding.py": [
        "test_term_dumb_gets_no_escape_sequences",
        "test_tree_has_the_same_lines_on_every_console",
    ],
    "test_plan.py": [
        "test_brute_force_all_reports",
        "test_brute_force_seeded_sweep",
        "test_brute_force_with_missing_reports",
        "test_plans_are_frontiers_fit_and_beat_every_level",
        "test_plans_with_missing_reports_are_frontiers",
        "test_written_directory_round_trip_random",
    ],
    "test_plan_privacy.py": ["test_the_rest_of_the_markdown_is_the_same"],
    "test_render_trial.py": [
        "test_brief_list_reports_prints_the_lists",
        "test_hide_hypothetical_hides_the_hypothetical_costs",
        "test_hide_hypothetical_legend_explains_only_the_columns_left",
        "test_hide_hypothetical_titles_and_legends_use_the_output_width",
        "test_plan_at_80_columns_cuts_no_number_or_header",
        "test_plan_narrowest_output_cuts_nothing",
        "test_plan_wrapped_summary_lines_keep_their_indent",
        "test_tiny_columns_gives_the_40_column_minimum",
        "test_tree_heading_wraps_between_items_without_trailing_blanks",
    ],
    "test_report_cli.py": [
        "test_report_findings_follow_the_thresholds_like_levels",
        "test_the_thresholds_change_what_report_finds",
    ],
    "test_selection.py": ["test_engine_matches_reference"],
    "test_shuffle.py": ["test_equals_random_shuffle"],
    "test_status.py": ["test_every_selection_of_every_real_index_has_a_status"],
    "test_treeview.py": ["test_cli_tree_bad_input_is_one_line_exit_2"],
    "test_update_run.py": ["test_text_follows_width_and_columns"],
    "test_writes.py": [
        "test_concurrent_plan_write_one_wins",
        "test_file_size_limit",
        "test_full_disk_keeps_old_file_and_no_temp",
        "test_fuzz_writers_on_random_layouts",
        "test_issue_13_relative_paths_from_the_project_root",
        "test_sigkill_during_cli_plan_write",
    ],
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """A test that takes the storage emulators (tests/io/test_remote.py's fixtures) is ``emulator``; one
    in LARGE_TESTS is ``large``. A parametrized test runs its first case in the default tier; every
    other case is ``large``."""
    first_case: set[str] = set()
    for item in items:
        if {"azurite", "moto"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.emulator)
        if getattr(item, "originalname", None) in LARGE_TESTS.get(item.path.name, ()):
            item.add_marker(pytest.mark.large)
        if not hasattr(item, "callspec") or any(item.get_closest_marker(name) for name in TIERS):
            continue
        test = item.nodeid.split("[", 1)[0]
        if test in first_case:
            item.add_marker(pytest.mark.large)
        first_case.add(test)


@pytest.fixture(scope="session")
def _token_cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("token-cache")


@pytest.fixture(autouse=True)
def _token_cache_in_tmp(_token_cache_root, monkeypatch):
    """The exact-token-count cache (graphrag_audit.graphrag.token_cache) of every test, in-process
    or in a child, lives in a temporary directory: the suite never writes into the user's home.
    XDG_CACHE_HOME too, for children whose environment drops GRAPHRAG_AUDIT_* variables."""
    monkeypatch.setenv("GRAPHRAG_AUDIT_CACHE_DIR", str(_token_cache_root / "graphrag-audit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_token_cache_root))
