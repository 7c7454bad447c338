//! A small actix-web service with its own routes and a jobwheel executor mounted under `/xxl-job`,
//! so one port serves both. Register it with an admin as `http://IP:PORT/xxl-job/`.
//!
//! Environment: `ACCESS_TOKEN` (required: the admin's token, printed at its first start),
//! `PORT` (default 8081; 0 picks a free one), `ADMIN_ADDRESSES` (comma-separated, default
//! `http://127.0.0.1:8080`), `APP_NAME` (default `embedded-demo`), `LOG_PATH` (default
//! `./data/embedded-joblogs`), `EXECUTOR_IP` (registered IP, default: detected).
//! Stop it with Ctrl-C or SIGTERM: the executor finishes its jobs, flushes results and deregisters.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use jobwheel::executor::{shutdown_signal, Executor, JobContext, JobResult};

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// The service's own state, shared with a job handler.
#[derive(Default)]
struct Stats {
    reports: AtomicU64,
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();

    let Ok(token) = std::env::var("ACCESS_TOKEN") else {
        eprintln!(
            "embedded: set ACCESS_TOKEN to the admin's access token (printed at its first start)"
        );
        std::process::exit(2);
    };
    let port: u16 = env_or("PORT", "8081").parse()?;
    // bind first, so the executor registers the port actually bound (PORT=0 works)
    let listener = TcpListener::bind(("0.0.0.0", port))?;
    let port = listener.local_addr()?.port();
    let stats = Arc::new(Stats::default());

    let job_stats = stats.clone();
    let mut builder = Executor::builder()
        .admin_addresses(env_or("ADMIN_ADDRESSES", "http://127.0.0.1:8080").split(','))
        .app_name(env_or("APP_NAME", "embedded-demo"))
        .access_token(token)
        .port(port)
        .mount_path("/xxl-job")
        .log_path(env_or("LOG_PATH", "./data/embedded-joblogs"))
        // async handler: logs its parameter and waits a little without blocking anything
        .handler("greet", |ctx: JobContext| async move {
            ctx.log(format!("hello, {}", ctx.param()));
            tokio::time::sleep(Duration::from_millis(50)).await;
            JobResult::success_with(format!("greeted {}", ctx.param()))
        })
        // blocking handler: plain code on its own thread, touching the service's state
        .blocking_handler("report", move |ctx: JobContext| {
            let n = job_stats.reports.fetch_add(1, Ordering::SeqCst) + 1;
            ctx.log(format!(
                "report #{n} for shard {}/{}",
                ctx.shard_index(),
                ctx.shard_total()
            ));
            JobResult::success_with(format!("report #{n}"))
        });
    if let Ok(ip) = std::env::var("EXECUTOR_IP") {
        builder = builder.ip(ip);
    }
    let executor = builder.build()?;

    let exec = executor.clone();
    let app_stats = stats.clone();
    let server = HttpServer::new(move || {
        let stats = app_stats.clone();
        App::new()
            .route(
                "/hello",
                web::get().to(|| async { HttpResponse::Ok().body("hello from the service") }),
            )
            .route(
                "/stats",
                web::get().to(move || {
                    let n = stats.reports.load(Ordering::SeqCst);
                    async move { HttpResponse::Ok().json(serde_json::json!({ "reports": n })) }
                }),
            )
            // the executor's metrics at the service's own /metrics (they are also at
            // /xxl-job/metrics); both ask for the access token as `Authorization: Bearer`
            .route("/metrics", exec.metrics_route())
            .service(exec.scope("/xxl-job"))
    })
    // the executor needs the actix system alive while it shuts down; we handle signals below
    .disable_signals()
    .listen(listener)?
    .run();
    let handle = server.handle();
    let served = actix_web::rt::spawn(server);
    executor.start_registration(port);
    println!("embedded service listening on port {port}");

    shutdown_signal().await;
    executor.shutdown().await;
    handle.stop(true).await;
    served.await??;
    Ok(())
}
