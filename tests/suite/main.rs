//! Every integration test of faultline, in one test binary (`cargo nextest run --test
//! suite`): one module per area, the shared helpers declared once here. A single
//! file's tests run as `cargo nextest run --test suite <module>::`.
//!
//! Under nextest every test is a process of its own; `common`'s docs say what is
//! shared between them (the demo run) and what plain `cargo test` needs.

mod common;
mod support {
    pub mod attach;
    pub mod docker_fixture;
    pub mod ops;
    pub mod repo;
    pub mod ssh_hosts;
    pub mod sshd;
    pub mod tcp_echo;
    pub mod tmux;
    pub mod users;
}

mod agreement;
mod audit_references;
mod author_in_run;
mod author_mode;
mod capability;
mod cgroup_escape;
mod cli_lint;
mod crash_resume;
mod demo_runspec;
mod demo_session;
mod demo_sut;
mod engine_iteration;
mod engine_paths;
mod exec;
mod fault_schedule;
mod fuzz_regressions;
mod headless;
mod heal;
mod host_ssh;
mod integrity;
mod isolation;
mod journal;
mod landing_and_sanitize;
mod landing_signals;
mod layering;
mod lint_snapshot;
mod nemesis_clock;
mod nemesis_command;
mod nemesis_disk;
mod nemesis_docker;
mod nemesis_net;
mod nemesis_process;
mod nemesis_proxy;
mod new_plan;
mod nextest_groups;
mod operator;
mod operators;
mod oracle_check_cli;
mod oracle_checkers;
mod oracle_formats;
mod oracle_history;
mod oracle_kv_edn;
mod oracle_linearizability;
mod oracle_linearizability_pruning;
mod oracle_picker_lint;
mod oracle_run;
mod oracle_stream_formats;
mod oracle_txn;
mod output_volume;
mod plan_lint;
mod plan_parse;
mod postgres_example;
mod preflight;
mod privileged;
mod proxy_substitution;
mod redis_example;
mod reduction;
mod reduction_stop;
mod references_nemesis;
mod replay;
mod report_figures;
mod report_html;
mod report_junit;
mod report_render;
mod runspec;
mod runspec_steps;
mod runspec_vars;
mod session_dir;
mod session_privacy;
mod session_robust;
mod session_security;
mod ssh_cluster;
mod ssh_hosts;
mod terminal_writers;
mod toolbox;
mod tui_chart;
mod tui_config;
mod tui_e2e;
mod tui_hostile;
mod tui_snapshots;
mod verdict_aggregate;
mod verdict_references;
mod verdict_tree;
