//! Admin processes for the crash and cluster tests: started from the built binary on a port of
//! their own, waited for, and signalled.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use jobwheel::actors::fault_exit::FAULT_EXIT_VAR;

use crate::kit::{poll_for, wait_for, ADMIN_PASSWORD};

const BIN: &str = env!("CARGO_BIN_EXE_jobwheel");
/// The executors' token of every admin these tests start.
pub const TOKEN: &str = "workflow-process-token-0123456789";

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Where [`start_admin`] writes the output of the admin called `name`.
pub fn admin_log(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!("admin-{name}.log"))
}

/// `jobwheel admin` on `port`, its log in `dir/admin-{name}.log`, dying at `crash` (a crash
/// point and its count) when given.
pub fn start_admin(url: &str, port: u16, dir: &Path, name: &str, crash: Option<&str>) -> Child {
    let log = std::fs::File::create(admin_log(dir, name)).expect("log file");
    let mut cmd = Command::new(BIN);
    cmd.args(["admin", "--bind", &format!("127.0.0.1:{port}")])
        .args(["--database-url", url, "--access-token", TOKEN])
        .args(["--admin-password", ADMIN_PASSWORD, "--timezone", "UTC"])
        .current_dir(dir)
        .env("RUST_LOG", "warn,jobwheel=info")
        .env_remove(FAULT_EXIT_VAR)
        .stdout(Stdio::null())
        .stderr(log);
    if let Some(point) = crash {
        cmd.env(FAULT_EXIT_VAR, point);
    }
    cmd.spawn().expect("start an admin")
}

/// Waits until the admin on `port` answers its health check.
pub async fn wait_healthy(port: u16) {
    let client = super::api::client(Duration::from_secs(5), true);
    let up = wait_for(Duration::from_secs(30), || {
        let req = client.get(format!("http://127.0.0.1:{port}/healthz"));
        async move { req.send().await.ok()?.status().is_success().then_some(()) }
    })
    .await;
    assert!(up.is_some(), "the admin on port {port} is up");
}

/// Every admin log in `dir`, for a failure's message.
pub fn admin_logs(dir: &Path) -> String {
    let mut logs: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| {
                    let path = e.ok()?.path();
                    let name = path.file_name()?.to_string_lossy().to_string();
                    Some((name, std::fs::read_to_string(&path).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    logs.into_iter()
        .map(|(name, text)| format!("==== {name}\n{text}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits for `child` to die at its crash point, failing with the logs if it does not.
pub async fn wait_dead(child: &mut Child, dir: &Path, point: &str) {
    let dead = poll_for(Duration::from_secs(60), || child.try_wait().ok().flatten()).await;
    if dead.is_none() {
        let _ = child.kill();
        panic!("the admin did not reach {point}:\n{}", admin_logs(dir));
    }
}

/// Sends `sig` (`-KILL`, `-STOP`, ...) to `child`.
pub fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("send a signal");
    assert!(status.success());
}
