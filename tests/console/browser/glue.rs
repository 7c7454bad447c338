//! The GLUE page: CodeMirror with the script's language, Tab indenting, an empty script
//! refused, versions viewed, compared side by side and restored; checked by axe-core and shot
//! in both languages at both widths.

use super::*;

/// The editor's text, as CodeMirror holds it.
async fn editor_text(b: &Browser) -> String {
    script_text(
        b,
        "return JobwheelEditor.textOf(document.querySelector('#glue-form .cm-editor'));",
    )
    .await
}

/// Waits until the editor holds `text`.
async fn wait_editor(b: &Browser, text: &str) {
    let held = wait_for(Duration::from_secs(10), || async {
        let now = editor_text(b).await;
        (now == text).then_some(now)
    })
    .await;
    if held.is_none() {
        panic!("the editor holds {:?}, not {text:?}", editor_text(b).await);
    }
}

#[actix_web::test]
async fn an_operator_edits_a_script_compares_and_restores_a_version() {
    let Some((app, browser)) = open(TestApp::builder(Backend::Sqlite)).await else {
        return;
    };
    let group = app.group("glue-app").await;
    let res = app
        .api
        .create_job(json!({
            "jobGroup": group,
            "jobDesc": "Nightly cleanup script",
            "glueType": "GLUE_SHELL",
            "glueSource": "echo v0",
            "glueRemark": "created",
        }))
        .await;
    assert_eq!(res.status, 201, "{}", res.body);
    let id = res.id();
    let bean = app.job(group, "Bean job").await;
    let b = &browser;
    let c = &b.client;
    b.log_in(&app).await;

    // the list offers the editor for script jobs only
    b.click("header nav a[href='/jobs']").await;
    b.wait_path("/jobs").await;
    let bean_links = c
        .find_all(Locator::Css(&format!(
            "tr[data-job-id='{bean}'] a.glue-link"
        )))
        .await
        .unwrap();
    assert!(bean_links.is_empty(), "a BEAN job has no GLUE link");
    b.click(&format!("tr[data-job-id='{id}'] a[href='/jobs/{id}/glue']"))
        .await;
    b.wait_path(&format!("/jobs/{id}/glue")).await;
    wait_editor(b, "echo v0").await;
    b.wait_text("#glue-no-versions", "No versions").await;
    let plain = c.find(Locator::Css("#glue-source")).await.unwrap();
    assert!(
        !plain.is_displayed().await.unwrap(),
        "CodeMirror stands in for the plain field"
    );

    // Tab indents the line by four spaces, Shift+Tab takes them back; the form's field follows
    type_into_editor(b, "#!/bin/bash\necho \"<b>hi</b>\"").await;
    let source = "#!/bin/bash\necho \"<b>hi</b>\"";
    wait_editor(b, source).await;
    let content = c
        .find(Locator::Css("#glue-form .cm-content"))
        .await
        .unwrap();
    content.send_keys("\u{E011}\u{E004}").await.unwrap();
    wait_editor(b, "#!/bin/bash\n    echo \"<b>hi</b>\"").await;
    content.send_keys("\u{E008}\u{E004}\u{E008}").await.unwrap();
    wait_editor(b, source).await;
    assert_eq!(field_value(b, "#glue-source").await, source);
    // shell highlighting: the string is a token of its own
    let tokens = c
        .find_all(Locator::Css("#glue-form .cm-line span"))
        .await
        .unwrap();
    assert!(!tokens.is_empty(), "the shell source is highlighted");
    let line_numbers = text_of(b, "#glue-form .cm-lineNumbers").await;
    assert!(line_numbers.contains('2'), "{line_numbers}");

    // a remark is required; then the save shows up in the versions
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("[data-error-for=glueRemark]", "Remark is required")
        .await;
    b.fill("#glue-form input[name=glueRemark]", "say hi").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-form .notice", "Saved").await;
    b.wait_text("#glue-versions tbody", "say hi").await;
    b.wait_text("#glue-current-remark", "say hi").await;
    assert_eq!(
        app.api.get_glue(id).await.body["current"]["glueSource"],
        source
    );
    let first = app.api.get_glue(id).await.body["versions"][0]["id"]
        .as_i64()
        .unwrap();

    // an empty script is refused beside the editor, and nothing is saved
    type_into_editor(b, "\u{E003}").await;
    wait_editor(b, "").await;
    b.fill("#glue-form input[name=glueRemark]", "empty").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("[data-error-for=glueSource]", "Source must not be empty")
        .await;
    assert_eq!(
        app.api.get_glue(id).await.body["current"]["glueSource"],
        source
    );

    type_into_editor(b, "#!/bin/bash\necho three").await;
    b.fill("#glue-form input[name=glueRemark]", "third").await;
    b.click("#glue-form button[type=submit]").await;
    b.wait_text("#glue-versions tbody tr:first-child", "third")
        .await;

    // the older version, read-only, markup shown as text; then beside the editor's text
    b.click(&format!("button[data-view-version='{first}']"))
        .await;
    b.wait_text("#glue-view-source", "echo \"<b>hi</b>\"").await;
    b.wait_text("#glue-view-id", &first.to_string()).await;
    let bold = c.find_all(Locator::Css("#glue-view b")).await.unwrap();
    assert!(bold.is_empty(), "sources are never markup");
    b.click("#glue-view-compare").await;
    b.wait_text("#glue-diff .cm-merge-a", "echo \"<b>hi</b>\"")
        .await;
    b.wait_text("#glue-diff .cm-merge-b", "echo three").await;
    let changed = c
        .find_all(Locator::Css("#glue-diff .cm-changedLine"))
        .await
        .unwrap();
    assert!(!changed.is_empty(), "the changed lines are marked");
    assert!(
        c.find_all(Locator::Css("#glue-diff b"))
            .await
            .unwrap()
            .is_empty(),
        "sources are never markup in the diff either"
    );
    wait_editor(b, "#!/bin/bash\necho three").await;
    assert_accessible(b, "the GLUE page with a diff").await;
    full_shot(b, 1400, "glue-diff-en-1400").await;

    // restore it: the page reloads with it as the current source
    b.click("#glue-view-restore").await;
    c.accept_alert().await.unwrap();
    b.wait_text(
        "#glue-versions tbody tr:first-child",
        &format!("restored from version {first}"),
    )
    .await;
    wait_editor(b, source).await;
    assert_eq!(
        app.api.get_glue(id).await.body["current"]["glueSource"],
        source
    );

    // the page in both languages at both widths, checked by axe-core
    for lang in ["en", "zh"] {
        use_language(b, &app, lang).await;
        c.goto(&format!("{}/jobs/{id}/glue", app.base))
            .await
            .unwrap();
        wait_editor(b, source).await;
        for width in [1400, 390] {
            set_width(b, width).await;
            assert_fits(b, &format!("GLUE ({lang}) at {width} px")).await;
            assert_accessible(b, &format!("GLUE ({lang}) at {width} px")).await;
            full_shot(b, width, &format!("glue-{lang}-{width}")).await;
        }
    }
    set_width(b, 1400).await;

    // the audit log shows each save as the lines it changed
    use_language(b, &app, "en").await;
    c.goto(&format!("{}/audit?target=job&id={id}", app.base))
        .await
        .unwrap();
    b.wait_text("#audit", "+ echo three").await;
    b.wait_text("#audit pre.line-diff .del", "- echo three")
        .await;
    assert_accessible(b, "the audit log with script changes").await;
    b.screenshot("audit-script-lines").await;

    // a BEAN job's page says it has no script and links to its form
    use_language(b, &app, "en").await;
    c.goto(&format!("{}/jobs/{bean}/glue", app.base))
        .await
        .unwrap();
    b.wait_text("#glue-none", "BEAN").await;
    b.click(&format!("#glue-none a[href='/jobs/{bean}']")).await;
    b.wait_path(&format!("/jobs/{bean}")).await;

    close(app, browser).await;
}
