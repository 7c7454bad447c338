//! Why a run failed, in a line: read from its trigger message (which executor answered what, or
//! which call failed how, or why none was called) or from its result.

use super::Lang;
use crate::model::{Admission, RunRow};

/// What went wrong, with the parts the page words in the reader's language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cause {
    /// No executor was called: the routing's reason (none online, none matching, all drained).
    NotSent { why: String },
    /// Not run: its job's or group's instance cap was reached (skipped, or its queue was full
    /// or its wait too long).
    NotAdmitted { why: String },
    /// The call to an executor got no answer: what it met.
    CallFailed { address: String, why: String },
    /// The executor answered the trigger with a refusal.
    Refused {
        address: String,
        code: i32,
        msg: String,
    },
    /// The run was accepted and ended badly (its handler's result, a timeout, a kill, lost).
    Failed {
        address: String,
        code: i32,
        msg: String,
    },
}

impl Cause {
    /// The cause of `run`'s failure; `None` while it runs or when it succeeded.
    pub(super) fn of(run: &RunRow, trigger_text: &str) -> Option<Cause> {
        let address = run.executor_address.clone().unwrap_or_default();
        if run.handle_code > 0 && run.handle_code != 200 {
            return Some(Cause::Failed {
                address,
                code: run.handle_code,
                msg: first_lines(run.handle_msg.as_deref().unwrap_or_default()),
            });
        }
        if run.trigger_code == 0 || run.trigger_code == 200 {
            return None;
        }
        if matches!(run.admission, Admission::Skipped | Admission::Refused) {
            let why = admission_reason(trigger_text);
            return Some(Cause::NotAdmitted { why });
        }
        Some(from_trigger(trigger_text, run.trigger_code))
    }

    /// The cause in one line of at most `max` characters, for a list (English parts are the
    /// protocol's own words; the page's labels frame them).
    pub(super) fn detail(&self, max: usize) -> String {
        let text = match self {
            Cause::NotSent { why } | Cause::NotAdmitted { why } => why.clone(),
            Cause::CallFailed { why, .. } => why.clone(),
            Cause::Refused { msg, .. } | Cause::Failed { msg, .. } => msg.clone(),
        };
        cut(&text.replace('\n', " "), max)
    }

    /// The cause with its words (a routing or admission reason, an executor's answer) in
    /// `lang` where the message catalogue knows them.
    pub(super) fn worded(self, lang: Lang) -> Cause {
        let say = |text: String| lang.message(&text).into_owned();
        match self {
            Cause::NotSent { why } => Cause::NotSent { why: say(why) },
            Cause::NotAdmitted { why } => Cause::NotAdmitted { why: say(why) },
            Cause::CallFailed { address, why } => Cause::CallFailed {
                address,
                why: say(why),
            },
            Cause::Refused { address, code, msg } => Cause::Refused {
                address,
                code,
                msg: say(msg),
            },
            Cause::Failed { address, code, msg } => Cause::Failed {
                address,
                code,
                msg: say(msg),
            },
        }
    }

    /// The catalogue key of the sentence that frames it.
    pub(super) fn key(&self) -> &'static str {
        match self {
            Cause::NotSent { .. } => "cause_not_sent",
            Cause::NotAdmitted { .. } => "cause_not_admitted",
            Cause::CallFailed { .. } => "cause_call_failed",
            Cause::Refused { .. } => "cause_refused",
            Cause::Failed { .. } => "cause_failed",
        }
    }

    /// The executor it concerns, if one.
    pub(super) fn address(&self) -> &str {
        match self {
            Cause::NotSent { .. } | Cause::NotAdmitted { .. } => "",
            Cause::CallFailed { address, .. }
            | Cause::Refused { address, .. }
            | Cause::Failed { address, .. } => address,
        }
    }

    /// The code the executor gave, if it gave one.
    pub(super) fn code(&self) -> Option<i32> {
        match self {
            Cause::Refused { code, .. } | Cause::Failed { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Why admission did not run a fire now: the last `msg：` line of its trigger message.
pub(super) fn admission_reason(trigger_text: &str) -> String {
    trigger_text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("msg："))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The trigger message's last call (`Trigger Job：` block) or, without one, its last words.
fn from_trigger(text: &str, code: i32) -> Cause {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let field = |from: usize, name: &str| {
        lines[from..]
            .iter()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    if let Some(start) = lines.iter().rposition(|l| l.starts_with("Trigger Job")) {
        let address = field(start, "address：").unwrap_or_default();
        let code = field(start, "code：")
            .and_then(|c| c.parse().ok())
            .unwrap_or(code);
        let msg = field(start, "msg：").unwrap_or_default();
        // a transport error names the URL it was for: the executor never answered
        let url_of_call = address.trim_end_matches('/');
        if !url_of_call.is_empty() && msg.starts_with(url_of_call) {
            let why = msg[url_of_call.len()..]
                .trim_start_matches(|c: char| c != ':')
                .trim_start_matches(':')
                .trim()
                .to_string();
            return Cause::CallFailed { address, why };
        }
        return Cause::Refused { address, code, msg };
    }
    let why = lines
        .iter()
        .rev()
        .find(|l| !l.contains(">>>>") && !l.contains("<<<<"))
        .map(|l| l.to_string())
        .unwrap_or_default();
    Cause::NotSent { why }
}

/// The first lines of a result message, as one line.
fn first_lines(msg: &str) -> String {
    let lines: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    lines.join(" ")
}

/// `text` cut to `max` characters for a table cell.
pub(super) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TriggerType;

    fn run(trigger_code: i32, handle_code: i32, handle_msg: &str) -> RunRow {
        RunRow {
            id: 1,
            job_group: 1,
            job_id: 1,
            trigger_type: TriggerType::Manual,
            schedule_time: 0,
            executor_address: Some("http://10.0.0.5:9999/".into()),
            executor_handler: None,
            executor_param: None,
            executor_sharding_param: None,
            executor_fail_retry_count: 0,
            trigger_time: 0,
            trigger_code,
            trigger_msg: None,
            handle_time: 0,
            handle_code,
            handle_msg: Some(handle_msg.to_string()),
            alarm_status: 0,
            wf_run_id: None,
            wf_node: None,
            admission: crate::model::Admission::Ran,
        }
    }

    const HEAD: &str = "Trigger type：Manual\nAddress list：[http://10.0.0.5:9999/]\n\n>>>>>>>>>>>Trigger<<<<<<<<<<<\n";

    #[test]
    fn a_fire_its_instance_cap_kept_from_running_says_so() {
        let text =
            format!("{HEAD}admission：SKIPPED\nmsg：skipped: job 1 has 2 of 2 instances open");
        let mut skipped = run(500, 0, "");
        skipped.admission = Admission::Skipped;
        let cause = Cause::of(&skipped, &text).expect("a cause");
        assert_eq!(cause.key(), "cause_not_admitted");
        assert_eq!(cause.detail(80), "skipped: job 1 has 2 of 2 instances open");
        let mut queued = run(0, 0, "");
        queued.admission = Admission::Queued;
        assert_eq!(
            Cause::of(&queued, &text),
            None,
            "a queued fire has not failed"
        );
    }

    #[test]
    fn an_executors_refusal_names_it_and_its_words() {
        let text = format!("{HEAD}Trigger Job：\naddress：http://10.0.0.5:9999/\ncode：500\nmsg：job handler [report] not found.");
        assert_eq!(
            Cause::of(&run(500, 0, ""), &text),
            Some(Cause::Refused {
                address: "http://10.0.0.5:9999/".into(),
                code: 500,
                msg: "job handler [report] not found.".into()
            })
        );
    }

    #[test]
    fn a_call_that_got_no_answer_says_what_it_met() {
        let text = format!("{HEAD}Trigger Job：\naddress：http://10.0.0.5:9999/\ncode：500\nmsg：http://10.0.0.5:9999/run: Connection refused (os error 111)");
        let cause = Cause::of(&run(500, 0, ""), &text).unwrap();
        assert_eq!(
            cause,
            Cause::CallFailed {
                address: "http://10.0.0.5:9999/".into(),
                why: "Connection refused (os error 111)".into()
            }
        );
        assert_eq!(cause.key(), "cause_call_failed");
    }

    #[test]
    fn a_run_never_sent_gives_the_routings_reason() {
        let text = format!(
            "{HEAD}Trigger Fail：registry address is empty: no executor with gpu=true online"
        );
        let cause = Cause::of(&run(500, 0, ""), &text).unwrap();
        assert_eq!(
            cause.detail(200),
            "Trigger Fail：registry address is empty: no executor with gpu=true online"
        );
        assert_eq!(cause.address(), "");
    }

    #[test]
    fn a_failed_result_is_the_cause_and_success_has_none() {
        let cause = Cause::of(&run(200, 502, "job execute timeout \n"), "").unwrap();
        assert_eq!((cause.key(), cause.code()), ("cause_failed", Some(502)));
        assert_eq!(cause.detail(100), "job execute timeout");
        assert_eq!(Cause::of(&run(200, 200, "ok"), ""), None);
        assert_eq!(Cause::of(&run(200, 0, ""), ""), None, "still running");
        assert_eq!(Cause::of(&run(0, 0, ""), ""), None, "not sent yet");
        assert_eq!(cut("日本語の文", 3), "日本語…");
    }
}
