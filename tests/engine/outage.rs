//! PostgreSQL out of reach for 10 s under load: an admin process reaches its database through a
//! TCP proxy in the test, which cuts every connection and refuses new ones, then lets them
//! through again. The admin must stay up, answer 503 on `/healthz` meanwhile, log the outage
//! once and its end once, resume scheduling by itself, and fire nothing twice.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobwheel::clock::{now_ms, sleep_until_epoch_ms};
use jobwheel::model::{MisfireStrategy, ScheduleType, TriggerType, TRIGGER_STATUS_RUNNING};
use jobwheel::store::{Backend, LogFilter};

use crate::cluster::{free_port, signal, start_admin, tally, wait_healthy, TOKEN};
use crate::engine_support::{job, manual_group};
use crate::kit::processes::admin_log;
use crate::kit::{wait_for, Behaviour, FakeExecutor, TestDb};

const JOBS: usize = 100;

/// A TCP proxy to the database that can be cut (every connection closed, new ones closed at
/// once) and restored.
struct Proxy {
    port: u16,
    open: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy port");
        let port = listener.local_addr().expect("proxy address").port();
        let open = Arc::new(AtomicBool::new(true));
        let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (is_open, all) = (open.clone(), streams.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if !is_open.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let mut all = all.lock().expect("streams");
                for stream in [&client, &server] {
                    all.extend(stream.try_clone());
                }
                drop(all);
                pipe(&client, &server);
                pipe(&server, &client);
            }
        });
        Proxy {
            port,
            open,
            streams,
        }
    }

    fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        for stream in self.streams.lock().expect("streams").drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` into `to` on a thread of its own until either side closes.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}

async fn health(port: u16) -> Option<u16> {
    let url = format!("http://127.0.0.1:{port}/healthz");
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(5))
        .finish();
    let res = client.get(url).send().await.ok()?;
    Some(res.status().as_u16())
}

#[actix_web::test]
async fn postgres_out_of_reach_for_ten_seconds() {
    let Some(db) = TestDb::create(Backend::Postgres).await else {
        return;
    };
    let mut url = url::Url::parse(&db.url).expect("database URL");
    let upstream = format!(
        "{}:{}",
        url.host_str().expect("host"),
        url.port().unwrap_or(5432)
    );
    let proxy = Proxy::start(upstream);
    url.set_port(Some(proxy.port)).expect("port");

    // kept when an assertion fails, for the admin's log; removed at the end otherwise
    let dir = tempfile::tempdir().expect("temp dir").keep();
    let port = free_port();
    let executor = FakeExecutor::start(
        &format!("http://127.0.0.1:{port}"),
        TOKEN,
        Behaviour::without_results(),
    );
    let group = manual_group(&db.store, "outage", &executor.address).await;
    let mut admin = start_admin(url.as_str(), port, dir.as_path(), "admin");
    wait_healthy(port).await;
    let start = (now_ms() / 1_000 + 3) * 1_000;
    let jobs: Vec<_> = (0..JOBS)
        .map(|i| {
            let mut j = job(group, &format!("every second {i}"), "demoJobHandler");
            j.schedule_type = ScheduleType::Cron;
            j.schedule_conf = "* * * * * ?".into();
            j.trigger_status = TRIGGER_STATUS_RUNNING;
            j.trigger_next_time = start;
            if i % 10 == 0 {
                j.misfire_strategy = MisfireStrategy::FireOnceNow;
            }
            j
        })
        .collect();
    db.store.insert_jobs_bulk(&jobs).await.expect("jobs");

    let cut_at = start + 8_000;
    let restore_at = cut_at + 10_000;
    sleep_until_epoch_ms(cut_at).await;
    proxy.cut();
    let mut answers = Vec::new();
    while now_ms() < restore_at - 500 {
        answers.extend(health(port).await);
        actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        admin.try_wait().expect("admin state").is_none(),
        "the admin runs on while its database is out of reach"
    );
    sleep_until_epoch_ms(restore_at).await;
    proxy.restore();

    // scheduling resumes by itself: every job fires again, in time, after the outage
    let resumed = restore_at + 8_000;
    let deadline = Duration::from_millis((resumed + 20_000 - now_ms()) as u64);
    let back = wait_for(deadline, || async {
        let after = tally(&db.store, resumed, resumed + 3_000).await;
        let jobs_back = after.reached.keys().map(|(job, _)| *job);
        let jobs_back: std::collections::HashSet<i32> = jobs_back.collect();
        (now_ms() > resumed + 3_000 && jobs_back.len() == JOBS).then_some(())
    })
    .await;
    let healthy_again = health(port).await;
    signal(&admin, "-TERM");
    let _ = admin.wait();

    let all = tally(&db.store, start, resumed + 3_000).await;
    // fires whose time passed during the outage follow each job's misfire strategy: a
    // FIRE_ONCE_NOW job fires once (a MISFIRE run), a DO_NOTHING job not at all
    let (_, runs) = db
        .store
        .list_logs(&LogFilter {
            limit: 1_000_000,
            ..Default::default()
        })
        .await
        .expect("runs");
    let mut catch_up = std::collections::HashMap::<i32, usize>::new();
    for run in runs
        .iter()
        .filter(|r| r.trigger_type == TriggerType::Misfire)
    {
        *catch_up.entry(run.job_id).or_default() += 1;
    }
    let duplicates = all.reached.values().filter(|&&n| n > 1).count();
    let during = answers.iter().filter(|&&code| code == 503).count();
    let log = std::fs::read_to_string(admin_log(dir.as_path(), "admin")).expect("admin log");
    let lines = |what: &str| log.lines().filter(|l| l.contains(what)).count();
    let (down, up) = (
        lines("database unreachable"),
        lines("database reachable again"),
    );
    eprintln!(
        "outage: /healthz answered {answers:?} during the cut, {healthy_again:?} after; \
         {} fires reached the executor, {duplicates} duplicate(s), latest {} ms late; \
         log: {down} outage line(s), {up} recovery line(s), {} handed back, {} lines in all",
        all.reached.len(),
        all.latest,
        lines("handed back"),
        log.lines().count()
    );
    assert!(back.is_some(), "scheduling did not resume after the outage");
    assert_eq!(duplicates, 0, "no fire reaches an executor twice");
    let ids: Vec<i32> = (1..=JOBS as i32).collect();
    let stored = db.store.get_jobs(&ids).await.expect("jobs");
    let once_now: Vec<i32> = stored
        .iter()
        .filter(|j| j.misfire_strategy == MisfireStrategy::FireOnceNow)
        .map(|j| j.id)
        .collect();
    assert_eq!(stored.len(), JOBS, "the jobs have ids 1 to {JOBS}");
    assert!(
        catch_up.keys().all(|id| once_now.contains(id)),
        "only FIRE_ONCE_NOW jobs catch up: {catch_up:?}"
    );
    assert_eq!(
        catch_up.len(),
        once_now.len(),
        "each FIRE_ONCE_NOW job fires once after the outage: {catch_up:?}"
    );
    assert!(catch_up.values().all(|&n| n == 1), "{catch_up:?}");
    assert!(
        during > 0,
        "/healthz answers 503 during the outage: {answers:?}"
    );
    assert!(
        answers.iter().all(|&code| code == 503 || code == 200),
        "{answers:?}"
    );
    assert_eq!(healthy_again, Some(200));
    assert_eq!(
        (down, up),
        (1, 1),
        "one line when the database goes, one when it is back; log in {}",
        dir.display()
    );
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        executor.received().len() >= all.reached.len(),
        "every fire the database says reached the executor did"
    );
    let _ = std::fs::remove_dir_all(&dir);
    db.drop_db().await;
}
