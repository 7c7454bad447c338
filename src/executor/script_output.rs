//! A script's output for a workflow: the last non-empty line of its standard output, when that
//! is a JSON object (the convention of Airflow's BashOperator), becomes its run's message.

use super::handler::{is_json_object, OUTPUT_MAX_BYTES};

/// The last non-empty line of a stream fed in chunks, kept only while it could be an output.
#[derive(Debug, Default)]
pub(crate) struct LastLine {
    /// The line being read, while it stays within the bound.
    current: Vec<u8>,
    /// Bytes of the line being read, counted past the bound.
    current_len: usize,
    /// The last complete non-empty line.
    last: Option<Line>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    /// Kept whole.
    Kept(String),
    /// Longer than an output may be: its length, and whether it opened like a JSON object.
    TooLong { bytes: usize, object: bool },
}

/// What the last line says about the run's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptOutput {
    /// No output: the run's message stays as it is.
    None,
    /// This JSON object is the output.
    Object(String),
    /// The last line looks like an output but is too long to be sent whole.
    TooLong(usize),
}

impl LastLine {
    /// Reads a chunk of the stream.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for part in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match part.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (part, false),
            };
            self.current_len += body.len();
            if self.current_len <= OUTPUT_MAX_BYTES {
                self.current.extend_from_slice(body);
            } else {
                // only whether it opens like an object matters now: keep its first visible byte
                let first = self
                    .current
                    .iter()
                    .chain(body)
                    .copied()
                    .find(|b| !b.is_ascii_whitespace());
                self.current = first.into_iter().collect();
            }
            if ends {
                self.end_line();
            }
        }
    }

    /// Ends the stream: a last line without a newline counts too.
    pub(crate) fn finish(mut self) -> ScriptOutput {
        self.end_line();
        match self.last {
            None => ScriptOutput::None,
            Some(Line::Kept(line)) if is_json_object(&line) => ScriptOutput::Object(line),
            Some(Line::Kept(_)) => ScriptOutput::None,
            Some(Line::TooLong { bytes, object }) => match object {
                true => ScriptOutput::TooLong(bytes),
                false => ScriptOutput::None,
            },
        }
    }

    fn end_line(&mut self) {
        let bytes = std::mem::take(&mut self.current);
        let len = std::mem::take(&mut self.current_len);
        if len > OUTPUT_MAX_BYTES {
            let object = bytes.first() == Some(&b'{');
            self.last = Some(Line::TooLong { bytes: len, object });
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        let line = text.trim();
        if !line.is_empty() {
            self.last = Some(Line::Kept(line.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output_of(chunks: &[&[u8]]) -> ScriptOutput {
        let mut last = LastLine::default();
        for c in chunks {
            last.feed(c);
        }
        last.finish()
    }

    #[test]
    fn the_last_non_empty_line_when_it_is_a_json_object() {
        assert_eq!(
            output_of(&[b"working\n{\"rows\": 42}\n\n  \n"]),
            ScriptOutput::Object("{\"rows\": 42}".into())
        );
        // split across chunks, no final newline, CRLF
        assert_eq!(
            output_of(&[b"a\r\n{\"ro", b"ws\":", b" 1}\r"]),
            ScriptOutput::Object("{\"rows\": 1}".into())
        );
        assert_eq!(output_of(&[b"{\"a\":1}\ndone\n"]), ScriptOutput::None);
        assert_eq!(output_of(&[b"[1, 2]\n"]), ScriptOutput::None);
        assert_eq!(output_of(&[b"{not json}\n"]), ScriptOutput::None);
        assert_eq!(output_of(&[]), ScriptOutput::None);
    }

    #[test]
    fn a_line_over_the_bound_is_not_kept() {
        let mut big = b"{\"x\":\"".to_vec();
        big.extend(std::iter::repeat_n(b'y', OUTPUT_MAX_BYTES));
        big.extend_from_slice(b"\"}\n");
        let expected = big.len() - 1;
        assert_eq!(output_of(&[&big]), ScriptOutput::TooLong(expected));
        let plain = vec![b'z'; OUTPUT_MAX_BYTES + 10];
        assert_eq!(output_of(&[&plain]), ScriptOutput::None);
        // a short line after a long one is the last
        assert_eq!(
            output_of(&[&big, b"{\"ok\":true}\n"]),
            ScriptOutput::Object("{\"ok\":true}".into())
        );
    }
}
