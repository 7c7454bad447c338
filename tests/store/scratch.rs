//! Throw-away databases for the benchmark.

use jobwheel::store::Store;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch_databases_come_and_go() {
    for var in [crate::kit::db::PG_ENV, crate::kit::db::MYSQL_ENV] {
        let Ok(server) = std::env::var(var) else {
            eprintln!("skipping scratch database test: {var} is not set");
            continue;
        };
        let name = format!("jwscratch_{}", uuid::Uuid::new_v4().simple());
        let url = Store::create_scratch_database(&server, &name)
            .await
            .unwrap();
        let store = Store::connect(&url, &Default::default()).await.unwrap();
        store.migrate().await.unwrap();
        let g = new_group(&store, "scratch").await;
        store.insert_job(&job(g, "in scratch")).await.unwrap();
        assert_eq!(store.count_jobs().await.unwrap(), 1);
        store.close().await;
        Store::drop_scratch_database(&server, &name).await.unwrap();
        // dropping twice is fine, and a fresh one with the same name starts empty
        Store::drop_scratch_database(&server, &name).await.unwrap();
        let url = Store::create_scratch_database(&server, &name)
            .await
            .unwrap();
        let store = Store::connect(&url, &Default::default()).await.unwrap();
        store.migrate().await.unwrap();
        assert_eq!(store.count_jobs().await.unwrap(), 0);
        store.close().await;
        Store::drop_scratch_database(&server, &name).await.unwrap();
    }
}
