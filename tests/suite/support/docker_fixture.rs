//! A real multi-container fixture for the docker nemesis tests, built without a
//! registry: an image `docker import`ed from a tiny root filesystem (a static busybox
//! plus the faultline binary and the shared libraries `ldd` names), four demo-store
//! nodes on an internal network the fixture creates — n1 the primary replicating to n2
//! and n3, n4 a node that carries no traffic. Every name starts with a per-test
//! prefix; the containers, the network and the image are removed on drop, also when
//! the test fails.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const PORT: u16 = 7000;
pub const NODES: [&str; 4] = ["n1", "n2", "n3", "n4"];

/// Runs a command; its stdout, or why it failed.
pub fn sh(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why the docker tests cannot run here, if they cannot.
pub fn unavailable() -> Option<String> {
    if let Err(e) = sh("docker", &["version", "--format", "{{.Server.Version}}"]) {
        return Some(format!("no Docker engine: {e}"));
    }
    if !Path::new("/bin/busybox").exists() {
        return Some("/bin/busybox missing (apt-get install busybox-static)".into());
    }
    None
}

/// `None` (after printing `SKIP: …`) when Docker is missing; a failure instead when
/// `FAULTLINE_REQUIRE_DOCKER=1`.
pub fn require_docker() -> bool {
    match unavailable() {
        None => true,
        Some(reason) => !crate::common::skipped("DOCKER", Some(reason)),
    }
}

/// The running fixture. Drop removes everything it created.
pub struct Fixture {
    pub prefix: String,
    pub image: String,
    pub network: String,
    /// First three octets of the network's /24.
    pub net24: String,
    /// Mounted at the same path in every container, so a client inside one writes its
    /// history where the engine reads it.
    pub shared: PathBuf,
    created: Vec<String>,
    network_created: bool,
    image_created: bool,
}

impl Fixture {
    pub fn name(&self, node: &str) -> String {
        format!("{}-{node}", self.prefix)
    }

    pub fn ip(&self, node: &str) -> String {
        let host = 11 + NODES.iter().position(|n| *n == node).unwrap_or(9);
        format!("{}.{host}", self.net24)
    }

    pub fn addr(&self, node: &str) -> String {
        format!("{}:{PORT}", self.ip(node))
    }

    /// Inspect field `format` (a Go template) of a node's container.
    pub fn inspect(&self, node: &str, format: &str) -> String {
        sh("docker", &["inspect", "--format", format, &self.name(node)])
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|e| format!("inspect failed: {e}"))
    }

    /// `running`, `paused`, `exited`, …
    pub fn status(&self, node: &str) -> String {
        self.inspect(node, "{{.State.Status}}")
    }

    /// The node's address on the fixture network ("" when disconnected).
    pub fn net_ip(&self, node: &str) -> String {
        self.inspect(
            node,
            &format!(
                "{{{{with index .NetworkSettings.Networks \"{}\"}}}}{{{{.IPAddress}}}}{{{{end}}}}",
                self.network
            ),
        )
    }

    /// Waits until every node answers a ping (asked from inside n1).
    pub fn ready(&self, within: Duration) -> Result<(), String> {
        let targets: Vec<String> = NODES.iter().map(|n| self.addr(n)).collect();
        let timeout = within.as_millis().to_string();
        sh(
            "docker",
            &[
                "exec",
                &self.name("n1"),
                "/faultline",
                "demo-sut",
                "ready",
                "--targets",
                &targets.join(","),
                "--timeout-ms",
                &timeout,
            ],
        )
        .map(|_| ())
    }

    /// The workload client run inside n1 against n1, recording its history under
    /// `artifacts` (a directory below `shared`).
    pub fn client(&self, seconds: u32) -> String {
        format!(
            "exec docker exec {} /faultline demo-sut client --target {} --seed ${{seed}} \
             --duration-ms {} --rate 50 --out ${{artifacts}}/history.jsonl \
             --fault-epoch-file ${{artifacts}}/fault_epoch",
            self.name("n1"),
            self.addr("n1"),
            seconds * 1000
        )
    }

    /// A service command that streams a node's own output into the engine's logs.
    pub fn log_stream(&self, node: &str) -> String {
        format!("exec docker logs -f --since 0s {}", self.name(node))
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for container in &self.created {
            let _ = sh("docker", &["rm", "-f", container]);
        }
        if self.network_created {
            let _ = sh("docker", &["network", "rm", &self.network]);
        }
        if self.image_created {
            let _ = sh("docker", &["rmi", "-f", &self.image]);
        }
    }
}

/// The shared libraries `ldd` lists for `binary` (absolute paths).
fn libraries(binary: &Path) -> Result<Vec<PathBuf>, String> {
    let text = sh("ldd", &[&binary.display().to_string()])?;
    Ok(text
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect())
}

/// A root filesystem: busybox as /bin/sh, faultline as /faultline, its libraries.
fn rootfs(at: &Path) -> Result<(), String> {
    let io = |e: std::io::Error| format!("rootfs: {e}");
    for dir in ["bin", "tmp", "etc"] {
        std::fs::create_dir_all(at.join(dir)).map_err(io)?;
    }
    std::fs::copy("/bin/busybox", at.join("bin/busybox")).map_err(io)?;
    std::os::unix::fs::symlink("busybox", at.join("bin/sh")).map_err(io)?;
    let faultline = Path::new(env!("CARGO_BIN_EXE_faultline"));
    std::fs::copy(faultline, at.join("faultline")).map_err(io)?;
    for lib in libraries(faultline)? {
        let inside = at.join(lib.strip_prefix("/").map_err(|e| e.to_string())?);
        if let Some(parent) = inside.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        // Copy the file the link points at, under the name the loader asks for.
        std::fs::copy(&lib, &inside).map_err(io)?;
    }
    Ok(())
}

/// `docker import`s the root filesystem at `root` as `image`.
fn import(root: &Path, image: &str) -> Result<(), String> {
    let import = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "tar -C '{}' -c . | docker import - '{image}'",
            root.display()
        ))
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("docker import: {e}"))?;
    if import.success() {
        Ok(())
    } else {
        Err(format!("docker import ended {import}"))
    }
}

/// Containers that only sleep, from an image of a static busybox alone (imported, no
/// registry, no network): victims for a fault that needs nothing but a container.
/// Removed with their image on drop.
pub struct Sleepers {
    pub names: Vec<String>,
    image: Option<String>,
}

impl Sleepers {
    /// `count` of them, named after `test`.
    pub fn start(test: &str, count: usize) -> Result<Sleepers, String> {
        let prefix = format!("flt-{test}-{}", std::process::id());
        let mut out = Sleepers {
            names: Vec::new(),
            image: None,
        };
        let root = tempfile::tempdir().map_err(|e| e.to_string())?;
        let io = |e: std::io::Error| format!("rootfs: {e}");
        std::fs::create_dir_all(root.path().join("bin")).map_err(io)?;
        std::fs::copy("/bin/busybox", root.path().join("bin/busybox")).map_err(io)?;
        let image = format!("{prefix}-sleeper:latest");
        import(root.path(), &image)?;
        out.image = Some(image.clone());
        for i in 0..count {
            let name = format!("{prefix}-s{i}");
            out.names.push(name.clone());
            let args = ["run", "-d", "--name", &name, "--network", "none", &image];
            let args: Vec<&str> = args
                .into_iter()
                .chain(["/bin/busybox", "sleep", "3600"])
                .collect();
            sh("docker", &args)?;
        }
        Ok(out)
    }

    /// `running`, `paused`, `exited`, … of container `name`.
    pub fn status(name: &str) -> String {
        sh(
            "docker",
            &["inspect", "--format", "{{.State.Status}}", name],
        )
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|e| format!("inspect failed: {e}"))
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = sh("docker", &["rm", "-f", name]);
        }
        if let Some(image) = &self.image {
            let _ = sh("docker", &["rmi", "-f", image]);
        }
    }
}

/// Builds the image, the network and the four nodes; waits until all answer.
pub fn build(test: &str, shared: &Path) -> Result<Fixture, String> {
    let prefix = format!("flt-{test}-{}", std::process::id());
    let mut fixture = Fixture {
        image: format!("{prefix}-img:latest"),
        network: format!("{prefix}-net"),
        net24: String::new(),
        shared: shared.to_path_buf(),
        created: Vec::new(),
        network_created: false,
        image_created: false,
        prefix,
    };
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    rootfs(root.path())?;
    import(root.path(), &fixture.image)?;
    fixture.image_created = true;
    // An unused /24: try a few derived from the pid and the test name.
    let seed = std::process::id() as usize + test.len() * 37;
    let mut last = String::new();
    for attempt in 0..24 {
        let net24 = format!(
            "10.{}.{}",
            150 + (seed + attempt) % 50,
            (seed / 50 + attempt * 7) % 250
        );
        match sh(
            "docker",
            &[
                "network",
                "create",
                "--internal",
                "--subnet",
                &format!("{net24}.0/24"),
                &fixture.network,
            ],
        ) {
            Ok(_) => {
                fixture.net24 = net24;
                fixture.network_created = true;
                break;
            }
            Err(e) => last = e,
        }
    }
    if !fixture.network_created {
        return Err(format!("no free subnet for the fixture network: {last}"));
    }
    let followers = format!("n2={},n3={}", fixture.addr("n2"), fixture.addr("n3"));
    let shared_mount = format!("{0}:{0}", shared.display());
    for node in ["n2", "n3", "n4", "n1"] {
        let name = fixture.name(node);
        let mut args: Vec<String> = [
            "run",
            "-d",
            "--name",
            &name,
            "--network",
            &fixture.network,
            "--ip",
            &fixture.ip(node),
            "-v",
            &shared_mount,
            &fixture.image,
            "/faultline",
            "demo-sut",
            "node",
            "--name",
            node,
            "--listen",
            &fixture.addr(node),
        ]
        .map(String::from)
        .to_vec();
        if node == "n1" {
            args.extend(["--followers".to_string(), followers.clone()]);
        }
        fixture.created.push(name);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sh("docker", &args)?;
    }
    let start = Instant::now();
    fixture
        .ready(Duration::from_secs(15))
        .map_err(|e| format!("fixture not ready after {:?}: {e}", start.elapsed()))?;
    Ok(fixture)
}
