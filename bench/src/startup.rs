//! `startup`: process start to `/healthz` 200 (admin: on a fresh database, and restarted on an
//! existing one) and to the first registration (`jobwheel executor`, with a fake admin).

use std::time::Duration;

use super::common::{start_admin, Ctx};
use super::db::BenchDb;
use super::memory::registered_executor;
use super::sim::FakeAdmin;
use super::stats::{ms, summarize, Table};

/// Runs `runs` starts of each and prints the table.
pub async fn run(ctx: &Ctx, runs: usize) -> Result<(), String> {
    let backend = ctx.backend_name();
    println!(
        "startup: {runs} run(s) each on {backend} (load average {})",
        super::common::load_average()
    );
    let mut fresh = Vec::new();
    let mut restart = Vec::new();
    for _ in 0..runs {
        let db = BenchDb::create(ctx.database_url.as_deref(), &ctx.work, "start").await?;
        let result = async {
            let first = start_admin(ctx, &db).await?;
            fresh.push(first.startup.as_secs_f64() * 1_000.0);
            first.process.stop(Duration::from_secs(10)).await;
            let again = start_admin(ctx, &db).await?;
            restart.push(again.startup.as_secs_f64() * 1_000.0);
            again.process.stop(Duration::from_secs(10)).await;
            Ok::<(), String>(())
        }
        .await;
        db.drop_db().await;
        result?;
    }
    let fake = FakeAdmin::start()?;
    let mut exec = Vec::new();
    for _ in 0..runs {
        let (process, _) = registered_executor(ctx, &fake, 90).await?;
        let registered = fake
            .registrations()
            .first()
            .map(|(at, _)| at.saturating_duration_since(process.started))
            .ok_or("no registration recorded")?;
        exec.push(registered.as_secs_f64() * 1_000.0);
        process.stop(Duration::from_secs(10)).await;
    }
    fake.stop().await;
    let mut t = Table::new(
        format!("startup ({backend}, {runs} run(s) each)"),
        &["what", "median ms", "min ms", "max ms"],
    );
    for (name, v) in [
        (
            "admin: start to /healthz 200, fresh database (migrations, first user)",
            &fresh,
        ),
        ("admin: start to /healthz 200, existing database", &restart),
        ("executor: start to first registration at the admin", &exec),
    ] {
        let s = summarize(v).ok_or("no start measured")?;
        t.row([name.to_string(), ms(s.p50), ms(s.min), ms(s.max)]);
    }
    println!("{}", t.render());
    Ok(())
}
