//! Diagnostics go to a file under the session root, never to the terminal: the
//! terminal belongs to the operator (progress lines now, the UI later).

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Sends `tracing` output to `<dir>/faultline.log` (filter from `FAULTLINE_LOG`,
/// default `info`). Keep the guard alive until exit so buffered lines are flushed.
/// Returns `None` (and logs nowhere) if the directory cannot be created or written
/// (a read-only or full session root is reported by the run itself), or a subscriber
/// is already installed.
pub fn to_file(dir: &Path) -> Option<WorkerGuard> {
    std::fs::create_dir_all(dir).ok()?;
    let appender = tracing_appender::rolling::RollingFileAppender::builder()
        .rotation(tracing_appender::rolling::Rotation::NEVER)
        .filename_prefix("faultline.log")
        .build(dir)
        .ok()?;
    // The default queue (128 000 lines) is a 4 MB array, allocated and touched whole
    // at start; the session logs a few lines a second, so 8192 is ample (a line that
    // finds the queue full is dropped, as with any limit).
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(8192)
        .finish(appender);
    let filter =
        EnvFilter::try_from_env("FAULTLINE_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
