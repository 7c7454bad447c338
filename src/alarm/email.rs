//! E-mail alarms over SMTP (XXL-JOB `EmailJobAlarm`): one mail per distinct address in the job's
//! `alarm_email`, an HTML table with a plain-text alternative.

use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::{Alarm, AlarmEvent, AlarmResult};

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// Plain connection upgraded with STARTTLS, which the server must offer (port 587).
    StartTls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No encryption (port 25, or a local relay).
    None,
}

impl std::str::FromStr for SmtpTls {
    type Err = &'static str;

    /// `starttls`, `tls` or `none`, in any case.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "starttls" => Ok(SmtpTls::StartTls),
            "tls" => Ok(SmtpTls::Tls),
            "none" => Ok(SmtpTls::None),
            _ => Err("expected starttls, tls or none"),
        }
    }
}

impl SmtpTls {
    /// The port used when `--smtp-port` is not given.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpTls::StartTls => 587,
            SmtpTls::Tls => 465,
            SmtpTls::None => 25,
        }
    }
}

/// Validated SMTP settings for alarm e-mails.
#[derive(Clone, PartialEq, Eq)]
pub struct SmtpSettings {
    /// Server host name.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Connection security.
    pub tls: SmtpTls,
    /// Login user and password, if the server wants a login.
    pub credentials: Option<(String, String)>,
    /// Sender mailbox (checked to parse as an address).
    pub from: String,
}

impl std::fmt::Debug for SmtpSettings {
    // the password never reaches a log line
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.credentials.as_ref().map(|(u, _)| u))
            .field("from", &self.from)
            .finish()
    }
}

/// How long one SMTP conversation may take.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(15);

/// A built alarm mail, before it is addressed to each recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlarmMail {
    /// Distinct recipients, in the order the job lists them.
    pub to: Vec<Mailbox>,
    /// Entries of `alarm_email` that are not addresses.
    pub invalid: Vec<String>,
    /// Subject line.
    pub subject: String,
    /// HTML body.
    pub html: String,
    /// Plain-text body.
    pub text: String,
}

/// The distinct mailboxes of a comma-separated address list, and the entries that do not parse.
pub fn recipients(list: &str) -> (Vec<Mailbox>, Vec<String>) {
    let mut to: Vec<Mailbox> = Vec::new();
    let mut invalid = Vec::new();
    for entry in list
        .split([',', ';'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        match entry.parse::<Mailbox>() {
            Ok(mb) => {
                let key = mb.email.to_string().to_ascii_lowercase();
                if !to
                    .iter()
                    .any(|m| m.email.to_string().to_ascii_lowercase() == key)
                {
                    to.push(mb);
                }
            }
            Err(_) => invalid.push(entry.to_string()),
        }
    }
    (to, invalid)
}

/// Escapes text for HTML.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A rough plain-text rendering of the HTML stored in trigger messages: `<br>` becomes a line
/// break, other tags go, the common entities are decoded.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        match rest[start..].find('>') {
            Some(end) => {
                let tag = rest[start + 1..start + end].trim().to_ascii_lowercase();
                if tag.starts_with("br") || tag == "/tr" || tag == "/p" {
                    out.push('\n');
                }
                rest = &rest[start + end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The mail of a workflow run's alarm: the workflow, the run, how it ended, its failed nodes.
fn workflow_mail(event: &AlarmEvent, w: &super::WorkflowAlarm, group: &str) -> AlarmMail {
    let (to, invalid) = recipients(&event.job.alarm_email);
    let message = event.log.handle_msg.as_deref().unwrap_or_default();
    let failed = match w.failed_nodes.is_empty() {
        true => "-".to_string(),
        false => w.failed_nodes.join(", "),
    };
    let html = format!(
        "<h5>Workflow monitor alarm</h5>\
         <table border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse; width:80%;\">\
         <thead style=\"font-weight: bold;color: #ffffff;background-color: #ff8c00;\"><tr>\
         <td>Executor</td><td>Workflow</td><td>Run</td><td>State</td><td>Failed nodes</td><td>Message</td></tr></thead>\
         <tbody><tr><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr></tbody></table>",
        escape_html(group),
        w.workflow_id,
        escape_html(&w.workflow_name),
        w.workflow_run_id,
        escape_html(&w.run_state),
        escape_html(&failed),
        escape_html(message),
    );
    let text = format!(
        "Workflow monitor alarm\n\nExecutor: {group}\nWorkflow: {} ({})\nRun: {}\nState: {}\nFailed nodes: {failed}\n\n{message}\n",
        w.workflow_id, w.workflow_name, w.workflow_run_id, w.run_state
    );
    let name: String = w
        .workflow_name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(120)
        .collect();
    AlarmMail {
        to,
        invalid,
        subject: format!(
            "Workflow monitor alarm: workflow {} ({name}) run {} {}",
            w.workflow_id, w.workflow_run_id, w.run_state
        ),
        html,
        text,
    }
}

/// Builds the mail of an event (XXL-JOB's table: executor, job id, description, type, content).
pub fn build_mail(event: &AlarmEvent) -> AlarmMail {
    if let Some(w) = &event.workflow {
        let group = event
            .group
            .as_ref()
            .map(|g| format!("{} ({})", g.title, g.app_name))
            .unwrap_or_else(|| format!("group {}", event.log.job_group));
        return workflow_mail(event, w, &group);
    }
    let (to, invalid) = recipients(&event.job.alarm_email);
    let job = &event.job;
    let log = &event.log;
    let group = event
        .group
        .as_ref()
        .map(|g| format!("{} ({})", g.title, g.app_name))
        .unwrap_or_else(|| format!("group {}", log.job_group));
    // XXL-JOB's content; the trigger message is HTML this admin wrote, the result is the executor's text
    let mut content = format!("Alarm Job LogId={}", log.id);
    if log.trigger_code != crate::protocol::SUCCESS_CODE {
        content.push_str("<br>TriggerMsg=<br>");
        content.push_str(log.trigger_msg.as_deref().unwrap_or_default());
    }
    if log.handle_code > 0 && log.handle_code != crate::protocol::SUCCESS_CODE {
        content.push_str(&format!(
            "<br>HandleCode={}<br>HandleMsg={}",
            log.handle_code,
            escape_html(log.handle_msg.as_deref().unwrap_or_default()).replace('\n', "<br>")
        ));
    }
    let html = format!(
        "<h5>Job monitor alarm</h5>\
         <table border=\"1\" cellpadding=\"3\" style=\"border-collapse:collapse; width:80%;\">\
         <thead style=\"font-weight: bold;color: #ffffff;background-color: #ff8c00;\"><tr>\
         <td width=\"20%\">Executor</td><td width=\"10%\">Job ID</td><td width=\"20%\">Job description</td>\
         <td width=\"10%\">Alarm type</td><td width=\"40%\">Content</td></tr></thead>\
         <tbody><tr><td>{}</td><td>{}</td><td>{}</td><td>Fail alarm</td><td>{}</td></tr></tbody></table>",
        escape_html(&group),
        job.id,
        escape_html(&job.job_desc),
        content
    );
    let text = format!(
        "Job monitor alarm\n\nExecutor: {group}\nJob ID: {}\nJob description: {}\nAlarm type: Fail alarm\n\n{}\n",
        job.id,
        job.job_desc,
        html_to_text(&content)
    );
    // a subject is one line: descriptions could hold line breaks
    let desc: String = job
        .job_desc
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(120)
        .collect();
    AlarmMail {
        to,
        invalid,
        subject: format!(
            "Job monitor alarm: job {} ({desc}) failed, log {}",
            job.id, log.id
        ),
        html,
        text,
    }
}

/// Sends alarm mails through one SMTP server.
pub struct EmailAlarm {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl EmailAlarm {
    /// A channel for the admin's SMTP settings; an error names what cannot be used.
    pub fn new(settings: &SmtpSettings) -> Result<Self, String> {
        let from = settings
            .from
            .parse::<Mailbox>()
            .map_err(|e| format!("invalid SMTP sender '{}': {e}", settings.from))?;
        let builder = match settings.tls {
            SmtpTls::StartTls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&settings.host)
                    .map_err(|e| format!("SMTP server '{}': {e}", settings.host))?
            }
            SmtpTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&settings.host)
                .map_err(|e| format!("SMTP server '{}': {e}", settings.host))?,
            SmtpTls::None => {
                AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&settings.host)
            }
        };
        let mut builder = builder.port(settings.port).timeout(Some(SMTP_TIMEOUT));
        if let Some((user, password)) = &settings.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(EmailAlarm {
            transport: builder.build(),
            from,
        })
    }

    async fn deliver(&self, event: &AlarmEvent) -> AlarmResult {
        let mail = build_mail(event);
        if mail.to.is_empty() && mail.invalid.is_empty() {
            return AlarmResult::NotConfigured;
        }
        let mut failures: Vec<String> = mail
            .invalid
            .iter()
            .map(|a| format!("'{a}' is not an e-mail address"))
            .collect();
        for to in &mail.to {
            let message = Message::builder()
                .from(self.from.clone())
                .to(to.clone())
                .subject(mail.subject.clone())
                .multipart(MultiPart::alternative_plain_html(
                    mail.text.clone(),
                    mail.html.clone(),
                ));
            let message = match message {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("mail to {}: {e}", to.email));
                    continue;
                }
            };
            if let Err(e) = self.transport.send(message).await {
                failures.push(format!("mail to {}: {e}", to.email));
            }
        }
        if failures.is_empty() {
            AlarmResult::Delivered
        } else {
            AlarmResult::Failed(failures.join("; "))
        }
    }
}

impl Alarm for EmailAlarm {
    fn name(&self) -> &'static str {
        "email"
    }

    fn send<'a>(&'a self, event: &'a AlarmEvent) -> LocalBoxFuture<'a, AlarmResult> {
        Box::pin(self.deliver(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alarm::tests::event;

    #[test]
    fn recipients_are_distinct_and_bad_ones_reported() {
        let (to, invalid) = recipients(" a@example.com,B@example.com;a@EXAMPLE.com, ,nope ");
        let emails: Vec<String> = to.iter().map(|m| m.email.to_string()).collect();
        assert_eq!(emails, vec!["a@example.com", "B@example.com"]);
        assert_eq!(invalid, vec!["nope"]);
    }

    #[test]
    fn mail_names_the_job_and_log_and_escapes_user_text() {
        let mail = build_mail(&event());
        assert_eq!(mail.to.len(), 2);
        assert_eq!(
            mail.subject,
            "Job monitor alarm: job 7 (Nightly <export>) failed, log 42"
        );
        assert!(mail.html.contains("Alarm Job LogId=42"), "{}", mail.html);
        assert!(mail.html.contains("Nightly &lt;export&gt;"));
        assert!(mail
            .html
            .contains("HandleCode=500<br>HandleMsg=disk &lt;full&gt;"));
        // the trigger was accepted: its message is not repeated
        assert!(!mail.html.contains("TriggerMsg"));
        assert!(
            mail.text
                .contains("Alarm Job LogId=42\nHandleCode=500\nHandleMsg=disk <full>"),
            "{}",
            mail.text
        );
        assert!(mail.text.contains("Job ID: 7"));

        let mut e = event();
        e.log.trigger_code = 500;
        e.log.trigger_msg = Some("address：[]<br>no executor".into());
        e.log.handle_code = 0;
        let mail = build_mail(&e);
        assert!(mail
            .html
            .contains("<br>TriggerMsg=<br>address：[]<br>no executor"));
        assert!(!mail.html.contains("HandleCode"));
        assert!(mail.text.contains("TriggerMsg=\naddress：[]\nno executor"));
    }

    #[test]
    fn a_workflow_mail_names_the_run_and_its_failed_nodes() {
        let mut e = event();
        e.log.handle_msg = Some("failed: <load> failed".into());
        e.workflow = Some(crate::alarm::WorkflowAlarm {
            workflow_id: 3,
            workflow_name: "nightly <etl>".into(),
            workflow_run_id: 9,
            run_state: "FAILED".into(),
            failed_nodes: vec!["load".into()],
        });
        let mail = build_mail(&e);
        assert_eq!(
            mail.subject,
            "Workflow monitor alarm: workflow 3 (nightly <etl>) run 9 FAILED"
        );
        assert!(mail.html.contains("nightly &lt;etl&gt;"), "{}", mail.html);
        assert!(mail.html.contains("failed: &lt;load&gt; failed"));
        assert!(mail.text.contains("Failed nodes: load"), "{}", mail.text);
        assert_eq!(mail.to.len(), 2);
    }

    #[test]
    fn html_becomes_text() {
        assert_eq!(
            html_to_text("a<br>b<span style=\"x\">c</span>&lt;d&gt; &amp; <br/>e"),
            "a\nbc<d> & \ne"
        );
        assert_eq!(html_to_text("x < y"), "x < y");
    }

    #[actix_rt::test]
    async fn a_job_without_addresses_sends_nothing() {
        let settings = SmtpSettings {
            host: "127.0.0.1".into(),
            port: 1,
            tls: SmtpTls::None,
            credentials: None,
            from: "jobwheel@example.com".into(),
        };
        let alarm = EmailAlarm::new(&settings).unwrap();
        let mut e = event();
        e.job.alarm_email = " ".into();
        assert_eq!(alarm.send(&e).await, AlarmResult::NotConfigured);
    }
}
