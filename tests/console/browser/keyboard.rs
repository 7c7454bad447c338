//! The job form and a run's page used from the keyboard alone: Tab walks every control in the
//! order they are shown, Enter submits and opens, and a refused save puts the focus on the
//! first bad field.

use super::*;

/// What has the focus: a field's name, else its id, else its text.
async fn focused(b: &Browser) -> String {
    script_text(
        b,
        "const e = document.activeElement;
         return e ? (e.name || e.id || e.textContent.trim()) : '';",
    )
    .await
}

/// Presses `keys` on whatever has the focus.
async fn press(b: &Browser, keys: &str) {
    b.client
        .active_element()
        .await
        .unwrap()
        .send_keys(keys)
        .await
        .unwrap();
}

const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";
/// Shift+Tab, Shift released after.
const BACK_TAB: &str = "\u{E008}\u{E004}\u{E000}";

/// The controls of `scope` a Tab reaches, in the page's order, named as [`focused`] names them.
async fn controls(b: &Browser, scope: &str) -> Vec<String> {
    let found = b
        .client
        .execute(
            &format!(
                "return [...document.querySelectorAll('{scope} :is(a[href], button, input:not([type=hidden]), select, textarea, [tabindex=\"0\"])')]
                   .filter((e) => !e.disabled && e.offsetParent !== null)
                   .map((e) => e.name || e.id || e.textContent.trim());"
            ),
            vec![],
        )
        .await
        .unwrap();
    found
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

#[actix_web::test]
async fn the_job_form_and_a_run_page_work_from_the_keyboard() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("keys-app").await;
    let executor = FakeExecutor::start(&app.base, &app.token, Behaviour::default());
    executor.register("keys-app").await;
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // Tab walks the job form's controls in the order they are shown, Save among them
    c.goto(&format!("{}/jobs/new", app.base)).await.unwrap();
    b.wait_text("h1", "New job").await;
    let expected = controls(b, "#job-form").await;
    assert!(expected.len() > 20, "{expected:?}");
    c.execute(
        "document.querySelector('#job-form [name=jobGroup]').focus();",
        vec![],
    )
    .await
    .unwrap();
    let mut walked = vec![focused(b).await];
    while walked.len() < expected.len() {
        press(b, TAB).await;
        walked.push(focused(b).await);
    }
    assert_eq!(walked, expected, "the Tab order is the order on the page");
    assert!(walked.iter().any(|n| n == "Save"), "{walked:?}");

    // Shift+Tab walks back; Enter on Save: refused, and the focus goes to the first bad field,
    // where typing fixes it
    let at = |name: &str| expected.iter().position(|n| n == name).unwrap();
    for _ in at("Save")..expected.len() - 1 {
        press(b, BACK_TAB).await;
    }
    assert_eq!(focused(b).await, "Save");
    press(b, ENTER).await;
    b.wait_text("[data-error-for=jobDesc]", "Description is required")
        .await;
    assert_eq!(focused(b).await, "jobDesc");
    press(b, "Keyboard job").await;
    for _ in at("jobDesc")..at("executorHandler") {
        press(b, TAB).await;
    }
    assert_eq!(focused(b).await, "executorHandler");
    press(b, "demoJobHandler").await;
    for _ in at("executorHandler")..at("Save") {
        press(b, TAB).await;
    }
    press(b, ENTER).await;
    b.wait_path("/jobs").await;
    b.wait_text("#jobs tbody", "Keyboard job").await;
    let job = app.api.list_jobs("").await.body["items"][0]["id"]
        .as_i64()
        .unwrap();
    assert_eq!(app.api.get_job(job).await.body["jobGroup"], group);

    // a run's page: Open job and Run again are reached by Tab, and Enter runs it again
    let run = app.api.trigger_job(job, None).await.body["logIds"][0]
        .as_i64()
        .unwrap();
    c.goto(&format!("{}/runs/{run}", app.base)).await.unwrap();
    b.wait_text("#run-state", "Succeeded").await;
    let on_page = controls(b, "main").await;
    assert!(on_page.contains(&"open-job".to_string()), "{on_page:?}");
    c.execute(
        "document.querySelector('main a, main button').focus();",
        vec![],
    )
    .await
    .unwrap();
    let mut steps = 0;
    while focused(b).await != "rerun" {
        press(b, TAB).await;
        steps += 1;
        assert!(steps <= on_page.len(), "Run again is never reached by Tab");
    }
    press(b, ENTER).await;
    let moved = wait_for(WAIT, || async {
        let path = b.path().await;
        (path != format!("/runs/{run}") && path.starts_with("/runs/")).then_some(path)
    })
    .await
    .expect("Run again opens the new run");
    assert_ne!(moved, format!("/runs/{run}"));

    close(app, browser).await;
}
