//! Names of the cgroups faultline makes, on this machine (`exec::cgroup`) and on a
//! node (`ssh::cgroup_prefix`): both start with [`PREFIX`], so heal knows them.

/// The prefix of every cgroup faultline makes for an iteration's services.
pub const PREFIX: &str = "faultline-";

/// `name` as one cgroup name: letters, digits, `_` and `-` only (a `.` could
/// collide with a core file such as `cgroup.procs`).
pub fn safe(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(100)
        .collect();
    if cleaned.is_empty() {
        "service".into()
    } else {
        cleaned
    }
}
