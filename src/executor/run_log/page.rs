//! One `/log` page: lines added one by one until the page's line or byte bound.

use crate::protocol::{cut_to_json_len, json_len, LOG_PAGE_MAX_BYTES, LOG_PAGE_MAX_LINES};

/// A page being filled: at most [`LOG_PAGE_MAX_LINES`] lines and [`LOG_PAGE_MAX_BYTES`] of
/// JSON-escaped content (a single longer line is cut, and said so).
#[derive(Debug, Default)]
pub(super) struct Page {
    content: String,
    taken: usize,
    bytes: usize,
}

impl Page {
    /// Adds one line (without its `\n`); false when the page is full and the line belongs to
    /// the next page.
    pub(super) fn push(&mut self, line: &[u8]) -> bool {
        if self.taken == LOG_PAGE_MAX_LINES || self.bytes >= LOG_PAGE_MAX_BYTES {
            return false;
        }
        let raw = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(raw);
        let size = json_len(&text) + 2; // and its "\n"
        if self.taken > 0 && self.bytes + size > LOG_PAGE_MAX_BYTES {
            return false;
        }
        if size > LOG_PAGE_MAX_BYTES {
            self.content
                .push_str(cut_to_json_len(&text, LOG_PAGE_MAX_BYTES - 100));
            self.content
                .push_str(&format!(" [line cut: {} bytes]", raw.len()));
        } else {
            self.content.push_str(&text);
        }
        self.content.push('\n');
        self.bytes += size;
        self.taken += 1;
        true
    }

    /// The content and the 1-based number of its last line, for a page that started at 0-based
    /// line `first` (0 when the page is empty).
    pub(super) fn finish(self, first: usize) -> (String, usize) {
        let last = if self.taken == 0 {
            0
        } else {
            first + self.taken
        };
        (self.content, last)
    }
}
