//! The processes a scenario starts (the `jobwheel` binary as admin or executor) and what
//! `/proc` says about them.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `jobwheel` binary next to this benchmark binary, or a message saying how to build it.
pub fn jobwheel_binary() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate the bench binary: {e}"))?;
    let dir = me
        .parent()
        .ok_or_else(|| format!("bench binary '{}' has no folder", me.display()))?;
    let bin = dir.join("jobwheel");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "'{}' not found: the bench starts the admin and executor from the jobwheel binary \
             next to it; build it first with `cargo build --release`",
            bin.display()
        ))
    }
}

/// A free TCP port on 127.0.0.1 (bound and released; the caller binds it right after).
pub fn free_port() -> std::io::Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// One reading of a process's memory and CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcSample {
    /// Resident set size, KiB (`VmRSS`).
    pub rss_kb: u64,
    /// Of which anonymous memory (heap, stacks), KiB (`RssAnon`; 0 where the kernel lacks it).
    pub anon_kb: u64,
    /// Of which pages of mapped files, mostly the binary's code, KiB (`RssFile`).
    pub file_kb: u64,
    /// User + system CPU time, clock ticks.
    pub cpu_ticks: u64,
}

/// Reads `/proc/<pid>/status` and `/proc/<pid>/stat`.
pub fn sample(pid: u32) -> std::io::Result<ProcSample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_sample(&status, &stat).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unreadable /proc/{pid}/status or stat"),
        )
    })
}

/// Parses VmRSS (and its anonymous and file parts) from a status file and utime+stime from a
/// stat line.
pub fn parse_sample(status: &str, stat: &str) -> Option<ProcSample> {
    let kb = |key: &str| status_kb(status, key);
    let rss_kb = kb("VmRSS:")?;
    Some(ProcSample {
        rss_kb,
        anon_kb: kb("RssAnon:").unwrap_or(0),
        file_kb: kb("RssFile:").unwrap_or(0),
        cpu_ticks: stat_cpu_ticks(stat)?,
    })
}

/// Resets a process's RSS high-water mark (`VmHWM`) to its current RSS (`clear_refs` 5,
/// Linux 4.0+); false where the kernel refuses.
pub fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// A process's highest RSS since start or since [`reset_peak_rss`], KiB (`VmHWM`).
///
/// Sampling RSS every few hundred ms can miss a peak between samples: a 200 ms sampler saw
/// the admin go from 72 to 86 MiB within one second at 10,000 fires/s.
pub fn peak_rss_kb(pid: u32) -> std::io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_kb(&status, "VmHWM:")
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no VmHWM line"))
}

/// The KiB figure of one `key:` line of a `/proc/<pid>/status` file.
fn status_kb(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// User plus system CPU, in clock ticks, of a process's or thread's `stat` line.
pub fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    stat_cpu_split(stat).map(|cpu| cpu.user + cpu.system)
}

/// CPU time split into user and kernel (system) parts, in clock ticks or seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuSplit<T> {
    /// Time in user space.
    pub user: T,
    /// Time in the kernel on the thread's behalf.
    pub system: T,
}

impl<T: std::ops::Add<Output = T>> std::ops::Add for CpuSplit<T> {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        CpuSplit {
            user: self.user + other.user,
            system: self.system + other.system,
        }
    }
}

impl<T: std::ops::Sub<Output = T>> std::ops::Sub for CpuSplit<T> {
    type Output = Self;

    fn sub(self, other: Self) -> Self {
        CpuSplit {
            user: self.user - other.user,
            system: self.system - other.system,
        }
    }
}

impl CpuSplit<u64> {
    /// The same split in seconds.
    pub fn secs(self) -> CpuSplit<f64> {
        CpuSplit {
            user: self.user as f64 / clock_ticks(),
            system: self.system as f64 / clock_ticks(),
        }
    }
}

/// User and system CPU, in clock ticks, of a process's or thread's `stat` line.
pub fn stat_cpu_split(stat: &str) -> Option<CpuSplit<u64>> {
    // the command name (field 2) may hold spaces; fields after its ')' are positional
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime is field 14, stime field 15
    Some(CpuSplit {
        user: fields.get(11)?.parse().ok()?,
        system: fields.get(12)?.parse().ok()?,
    })
}

/// CPU used so far by this process's threads whose name starts with `prefix`.
pub fn own_threads_cpu(prefix: &str) -> CpuSplit<f64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return CpuSplit::default();
    };
    let ticks = tasks
        .flatten()
        .filter_map(|task| {
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            if !comm.starts_with(prefix) {
                return None;
            }
            stat_cpu_split(&std::fs::read_to_string(task.path().join("stat")).ok()?)
        })
        .fold(CpuSplit::default(), |a: CpuSplit<u64>, b| a + b);
    ticks.secs()
}

/// CPU used so far by the calling thread.
pub fn this_thread_cpu() -> CpuSplit<f64> {
    std::fs::read_to_string("/proc/thread-self/stat")
        .ok()
        .and_then(|stat| stat_cpu_split(&stat))
        .unwrap_or_default()
        .secs()
}

/// Clock ticks per second of `/proc/<pid>/stat` times.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// CPU used between two samples over `wall`, in percent of one core.
pub fn cpu_percent(before: ProcSample, after: ProcSample, wall: Duration) -> f64 {
    let secs = after.cpu_ticks.saturating_sub(before.cpu_ticks) as f64 / clock_ticks();
    if wall.is_zero() {
        0.0
    } else {
        secs / wall.as_secs_f64() * 100.0
    }
}

/// A child process started by the bench; stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Spawned {
    child: Child,
    /// When `spawn` was called.
    pub started: Instant,
    /// Its stdout/stderr file.
    pub log: PathBuf,
    what: String,
}

impl Spawned {
    /// Starts `bin args...` with output to `log`.
    pub fn start(what: &str, bin: &Path, args: &[String], log: PathBuf) -> Result<Spawned, String> {
        Self::start_with_env(what, bin, args, &[], log)
    }

    /// Starts `bin args...` with `env` added to the bench's environment, output to `log`.
    pub fn start_with_env(
        what: &str,
        bin: &Path,
        args: &[String],
        env: &[(String, String)],
        log: PathBuf,
    ) -> Result<Spawned, String> {
        let out = File::create(&log)
            .map_err(|e| format!("cannot create log file '{}': {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("cannot share log file '{}': {e}", log.display()))?;
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", "info");
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        let started = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {what} ('{}'): {e}", bin.display()))?;
        Ok(Spawned {
            child,
            started,
            log,
            what: what.to_string(),
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Memory and CPU now.
    pub fn sample(&self) -> Result<ProcSample, String> {
        sample(self.pid()).map_err(|e| format!("cannot read /proc of the {}: {e}", self.what))
    }

    /// Its highest RSS from now until the epoch millisecond `end_ms`, KiB.
    ///
    /// The kernel's high-water mark catches peaks between samples; sampling every 500 ms
    /// stays as the fallback where the mark cannot be reset.
    pub async fn peak_rss_until(&self, end_ms: i64) -> Result<u64, String> {
        let exact = reset_peak_rss(self.pid());
        let mut peak = self.sample()?.rss_kb;
        while jobwheel::clock::now_ms() < end_ms {
            actix_web::rt::time::sleep(Duration::from_millis(500)).await;
            peak = peak.max(self.sample()?.rss_kb);
        }
        if exact {
            let hwm = peak_rss_kb(self.pid())
                .map_err(|e| format!("cannot read /proc of the {}: {e}", self.what))?;
            peak = peak.max(hwm);
        }
        Ok(peak)
    }

    /// An error if it has exited, naming its log.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "the {} exited ({status}); see {}",
                self.what,
                self.log.display()
            )),
            Err(e) => Err(format!("cannot check the {}: {e}", self.what)),
        }
    }

    /// SIGTERM, then waits up to `grace` before SIGKILL.
    pub async fn stop(mut self, grace: Duration) {
        self.stop_inner(grace).await;
    }

    async fn stop_inner(&mut self, grace: Duration) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SAFETY: plain kill(2) on our own child's pid
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            actix_web::rt::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The access token the bench's admin, executors and simulated executors share.
pub const BENCH_TOKEN: &str = "jobwheel-bench-token";

/// The password of the bench admin's `admin` user.
pub const ADMIN_PASSWORD: &str = "bench-password";

/// Starts `jobwheel admin` on 127.0.0.1:`port` against `database_url`.
pub fn spawn_admin(
    bin: &Path,
    port: u16,
    database_url: &str,
    work: &Path,
) -> Result<Spawned, String> {
    let args = [
        "admin",
        "--bind",
        &format!("127.0.0.1:{port}"),
        "--database-url",
        database_url,
        "--admin-password",
        ADMIN_PASSWORD,
        "--access-token",
        BENCH_TOKEN,
        "--timezone",
        "UTC",
    ]
    .map(String::from);
    Spawned::start("admin", bin, &args, work.join(format!("admin-{port}.log")))
}

/// Starts `jobwheel executor` on 127.0.0.1:`port` registering with `admin_url`.
pub fn spawn_executor(
    bin: &Path,
    port: u16,
    admin_url: &str,
    idle_timeout_secs: u64,
    work: &Path,
) -> Result<Spawned, String> {
    let args = [
        "executor",
        "--admin-addresses",
        admin_url,
        "--app-name",
        "jobwheel-bench-executor",
        "--access-token",
        BENCH_TOKEN,
        "--ip",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--idle-timeout-secs",
        &idle_timeout_secs.to_string(),
        "--log-path",
        &work.join(format!("executor-{port}")).display().to_string(),
    ]
    .map(String::from);
    Spawned::start(
        "executor",
        bin,
        &args,
        work.join(format!("executor-{port}.log")),
    )
}

/// Polls `GET /healthz` until it answers 200; returns the time since the process started.
pub async fn wait_healthy(
    proc_: &mut Spawned,
    port: u16,
    limit: Duration,
) -> Result<Duration, String> {
    let client = awc::Client::builder()
        .timeout(Duration::from_millis(500))
        .finish();
    let url = format!("http://127.0.0.1:{port}/healthz");
    loop {
        if let Ok(res) = client.get(&url).send().await {
            if res.status().as_u16() == 200 {
                return Ok(proc_.started.elapsed());
            }
        }
        proc_.check_alive()?;
        if proc_.started.elapsed() > limit {
            return Err(format!(
                "the admin did not answer /healthz within {limit:?}; see {}",
                proc_.log.display()
            ));
        }
        actix_web::rt::time::sleep(Duration::from_millis(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_parsed() {
        let status = "Name:\tjobwheel\nVmPeak:\t  99 kB\nVmRSS:\t   12345 kB\nRssAnon:\t    5000 kB\nRssFile:\t    7345 kB\nThreads:\t4\n";
        // pid (comm with ) and spaces) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        let stat = "42 (job wheel) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 1 2 3";
        let s = parse_sample(status, stat).unwrap();
        assert_eq!(s.rss_kb, 12345);
        assert_eq!((s.anon_kb, s.file_kb), (5000, 7345));
        assert_eq!(s.cpu_ticks, 300);
        let old_kernel = parse_sample("VmRSS:\t 10 kB\n", stat).unwrap();
        assert_eq!((old_kernel.rss_kb, old_kernel.anon_kb), (10, 0));
        assert!(parse_sample("Name: x\n", stat).is_none());
        assert!(parse_sample(status, "garbage").is_none());
    }

    #[test]
    fn own_process_can_be_sampled() {
        let s = sample(std::process::id()).unwrap();
        assert!(s.rss_kb > 0);
        assert!(s.anon_kb > 0 && s.anon_kb <= s.rss_kb);
        let later = ProcSample {
            cpu_ticks: s.cpu_ticks + clock_ticks() as u64,
            ..s
        };
        let pct = cpu_percent(s, later, Duration::from_secs(2));
        assert!((pct - 50.0).abs() < 1.0, "{pct}");
    }

    #[test]
    fn a_peak_window_forgets_earlier_peaks() {
        let me = std::process::id();
        // 128 MiB touched then freed: above any mmap threshold, so the pages go back at once
        let block = vec![1u8; 128 << 20];
        assert_eq!(
            block
                .iter()
                .step_by(4096)
                .map(|&b| b as usize)
                .sum::<usize>(),
            32_768
        );
        drop(block);
        let before_reset = peak_rss_kb(me).unwrap();
        assert!(before_reset >= 128 << 10, "VmHWM {before_reset} KiB");
        assert!(reset_peak_rss(me), "clear_refs refused");
        let after_reset = peak_rss_kb(me).unwrap();
        // other tests of this process may allocate meanwhile, but not 64 MiB
        assert!(
            after_reset + (64 << 10) < before_reset,
            "VmHWM {before_reset} KiB -> {after_reset} KiB after the reset"
        );
    }
}
