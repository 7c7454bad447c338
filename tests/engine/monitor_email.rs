//! E-mail alarms against a tiny fake SMTP server (`--smtp-tls none`): one mail per distinct
//! recipient, carrying the log id; a refused recipient makes the alarm fail (status 3).

use std::sync::{Arc, Mutex};

use jobwheel::actors::monitor::MonitorSettings;
use jobwheel::actors::monitor_fail::build_alarmer;
use jobwheel::alarm::AlarmEvent;
use jobwheel::model::{alarm_status, JobInfo, RunRow, TriggerType};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Default, Clone)]
struct Mail {
    from: String,
    to: Vec<String>,
    data: String,
}

type Mails = Arc<Mutex<Vec<Mail>>>;

async fn session(sock: TcpStream, mails: Mails) -> std::io::Result<()> {
    let (r, mut w) = sock.into_split();
    let mut lines = BufReader::new(r).lines();
    w.write_all(b"220 fake.test ESMTP\r\n").await?;
    let mut mail = Mail::default();
    let mut in_data = false;
    while let Some(line) = lines.next_line().await? {
        if in_data {
            if line == "." {
                in_data = false;
                mails.lock().expect("mails").push(std::mem::take(&mut mail));
                w.write_all(b"250 2.0.0 queued\r\n").await?;
            } else {
                mail.data.push_str(&line);
                mail.data.push('\n');
            }
            continue;
        }
        let upper = line.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            b"250 fake.test\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            mail.from = line[10..].trim().to_string();
            b"250 2.1.0 ok\r\n"
        } else if upper.starts_with("RCPT TO:") {
            let to = line[8..].trim().to_string();
            if to.contains("refused@") {
                b"550 5.1.1 no such user\r\n"
            } else {
                mail.to.push(to);
                b"250 2.1.5 ok\r\n"
            }
        } else if upper == "DATA" {
            in_data = true;
            b"354 go ahead\r\n"
        } else if upper == "RSET" || upper == "NOOP" {
            b"250 ok\r\n"
        } else if upper == "QUIT" {
            w.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            b"502 5.5.2 not implemented\r\n"
        };
        w.write_all(reply).await?;
    }
    Ok(())
}

async fn fake_smtp() -> (u16, Mails) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mails = Mails::default();
    let m = mails.clone();
    actix_web::rt::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let m = m.clone();
            actix_web::rt::spawn(async move {
                let _ = session(sock, m).await;
            });
        }
    });
    (port, mails)
}

fn monitors(port: u16) -> MonitorSettings {
    let port = port.to_string();
    let flags = [
        "--smtp-host",
        "127.0.0.1",
        "--smtp-port",
        &port,
        "--smtp-tls",
        "none",
    ];
    let from = ["--smtp-from", "jobwheel <jobwheel@example.com>"];
    MonitorSettings::from_admin(&crate::kit::app::admin_settings(
        &[&flags[..], &from].concat(),
    ))
}

fn event(alarm_email: &str) -> AlarmEvent {
    let mut job = JobInfo::new(3, "nightly export", "exportHandler");
    job.id = 7;
    job.alarm_email = alarm_email.into();
    AlarmEvent {
        group: None,
        log: RunRow {
            id: 4242,
            job_group: 3,
            job_id: 7,
            trigger_type: TriggerType::Cron,
            schedule_time: 1_000,
            executor_address: Some("http://127.0.0.1:9999/".into()),
            executor_handler: Some("exportHandler".into()),
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_time: 1_000,
            trigger_code: 200,
            trigger_msg: Some("accepted".into()),
            handle_time: 2_000,
            handle_code: 500,
            handle_msg: Some("disk full".into()),
            alarm_status: alarm_status::LOCKED,
            wf_run_id: None,
            wf_node: None,
            admission: jobwheel::model::Admission::Ran,
        },
        job,
        workflow: None,
    }
}

/// The body as sent, with quoted-printable soft breaks and `=3D` undone.
fn unfold(data: &str) -> String {
    data.replace("=\n", "").replace("=3D", "=")
}

#[actix_web::test]
async fn alarm_mails_reach_each_distinct_recipient() {
    let (port, mails) = fake_smtp().await;
    let alarmer = build_alarmer(&monitors(port));
    let outcome = alarmer
        .raise(&event("ops@example.com, dev@example.com, OPS@example.com"))
        .await;
    assert_eq!(outcome.delivered, vec!["email"]);
    assert_eq!(outcome.status(), alarm_status::SENT);

    let mails = mails.lock().unwrap().clone();
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert_eq!(mails[0].to, vec!["<ops@example.com>"]);
    assert_eq!(mails[1].to, vec!["<dev@example.com>"]);
    for m in &mails {
        assert_eq!(m.from, "<jobwheel@example.com>");
        let body = unfold(&m.data);
        assert!(body.contains("Alarm Job LogId=4242"), "{body}");
        assert!(body.contains("HandleMsg=disk full"), "{body}");
        assert!(
            body.contains("Subject: Job monitor alarm: job 7 (nightly export) failed, log 4242"),
            "{body}"
        );
    }
}

#[actix_web::test]
async fn a_refused_recipient_fails_the_alarm() {
    let (port, mails) = fake_smtp().await;
    let alarmer = build_alarmer(&monitors(port));
    let outcome = alarmer
        .raise(&event(
            "refused@example.com, ok@example.com, not-an-address",
        ))
        .await;
    assert_eq!(outcome.status(), alarm_status::FAILED);
    let (channel, why) = &outcome.failed[0];
    assert_eq!(*channel, "email");
    assert!(why.contains("refused@example.com"), "{why}");
    assert!(why.contains("'not-an-address'"), "{why}");
    // the other recipient still got the mail
    let mails = mails.lock().unwrap().clone();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].to, vec!["<ok@example.com>"]);
}

#[actix_web::test]
async fn an_unreachable_server_fails_the_alarm() {
    // nothing listens on port 1
    let alarmer = build_alarmer(&monitors(1));
    let outcome = alarmer.raise(&event("ops@example.com")).await;
    assert_eq!(outcome.status(), alarm_status::FAILED);
}
