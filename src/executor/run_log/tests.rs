use std::io::Write;

use super::*;
use crate::protocol::{LOG_PAGE_MAX_BYTES, LOG_PAGE_MAX_LINES};

#[test]
fn read_from_line_and_missing_log() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let log = logs.run(0, 5);
    log.line("one");
    log.raw(b"two\r\nthree\n");
    // another run of the same segment does not show in this one's log
    logs.run(0, 6).line("other");
    let all = logs.read(0, 5, 1);
    assert_eq!(all.to_line_num, 3);
    assert!(!all.is_end);
    assert!(all.log_content.ends_with("[jobwheel] one\ntwo\nthree\n"));
    let tail = logs.read(0, 5, 3);
    assert_eq!((tail.from_line_num, tail.to_line_num), (3, 3));
    assert_eq!(tail.log_content, "three\n");
    let past = logs.read(0, 5, 9);
    assert_eq!((past.to_line_num, past.log_content.as_str()), (0, ""));
    let missing = logs.read(0, 7, 1);
    assert_eq!(missing, LogResult::not_exists(1));
    assert_eq!(missing.log_content, "readLog fail, logFile not exists");
    assert!(missing.is_end);
    // the lines are in the segment, each under its run's id
    let segment = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(segment.lines().filter(|l| l.starts_with("5 ")).count(), 3);
    assert_eq!(segment.lines().filter(|l| l.starts_with("6 ")).count(), 1);
}

#[test]
fn a_log_written_before_segments_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = segment::legacy_path(dir.path(), 0, 9);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "first\nsecond\nno end").unwrap();
    let logs = RunLogs::new(dir.path());
    let page = logs.read(0, 9, 2);
    assert_eq!(
        (page.to_line_num, page.log_content.as_str()),
        (3, "second\nno end\n")
    );
}

/// Reads every page of a log the way the admin does, from line 1 on.
fn pages(logs: &RunLogs, log_id: i64) -> Vec<LogResult> {
    let mut out = Vec::new();
    let mut from = 1;
    loop {
        let page = logs.read(0, log_id, from);
        if page.to_line_num < from {
            return out;
        }
        from = page.to_line_num + 1;
        out.push(page);
    }
}

#[test]
fn large_logs_come_in_bounded_pages_with_every_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let log = logs.run(0, 7);
    let neighbour = logs.run(0, 8);
    let total = 3 * LOG_PAGE_MAX_LINES + 17;
    for chunk in (1..=total).collect::<Vec<_>>().chunks(1000) {
        let text: String = chunk.iter().map(|i| format!("line {i}\n")).collect();
        log.raw(text.as_bytes());
        neighbour.raw(b"between\n");
    }
    let pages = pages(&logs, 7);
    assert_eq!(pages.len(), 4);
    let mut expect = 1;
    for page in &pages {
        assert!(page.log_content.lines().count() <= LOG_PAGE_MAX_LINES);
        for line in page.log_content.lines() {
            assert_eq!(line, format!("line {expect}"));
            expect += 1;
        }
    }
    assert_eq!(expect, total + 1);
    // a page deep in the log is found again from the remembered offsets, and the log grows
    let again = logs.read(0, 7, 20_001);
    assert!(again.log_content.starts_with("line 20001\n"));
    log.raw(b"appended\n");
    let tail = logs.read(0, 7, total as i32 + 1);
    assert_eq!(
        (tail.to_line_num as usize, tail.log_content.as_str()),
        (total + 1, "appended\n")
    );
}

#[test]
fn pages_are_bounded_in_bytes_and_a_huge_line_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let log = logs.run(0, 8);
    // control characters take six bytes each in JSON
    let escaped = "\u{1b}[0m".repeat(2_000);
    for _ in 0..100 {
        log.raw(format!("{escaped}\n").as_bytes());
    }
    log.raw(format!("{}\nafter\n", "x".repeat(3 * LOG_PAGE_MAX_BYTES)).as_bytes());
    let all = pages(&logs, 8);
    let mut lines = 0;
    for page in &all {
        let json = serde_json::to_string(&page.log_content).unwrap();
        assert!(
            json.len() <= LOG_PAGE_MAX_BYTES + 2,
            "page of {} bytes",
            json.len()
        );
        lines += page.log_content.lines().count();
    }
    assert_eq!(lines, 102);
    let cut = all
        .iter()
        .flat_map(|p| p.log_content.lines())
        .nth(100)
        .unwrap();
    assert!(
        cut.ends_with(&format!("[line cut: {} bytes]", 3 * LOG_PAGE_MAX_BYTES)),
        "{}",
        &cut[cut.len() - 40..]
    );
    assert_eq!(all.last().unwrap().log_content, "after\n");
}

#[test]
fn a_torn_record_is_read_once_whole_and_garbage_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let log = logs.run(0, 3);
    log.raw(b"whole\n");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(log.path())
        .unwrap();
    file.write_all(b"not a record\n3 half").unwrap();
    assert_eq!(logs.read(0, 3, 1).log_content, "whole\n");
    file.write_all(b" done\n").unwrap();
    let page = logs.read(0, 3, 1);
    assert_eq!(
        (page.to_line_num, page.log_content.as_str()),
        (2, "whole\nhalf done\n")
    );
}

#[test]
fn a_record_a_killed_process_left_half_written_is_not_glued_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = RunLogs::new(dir.path()).run(0, 3).path().to_path_buf();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "3 whole\n4 cut sh").unwrap();
    // the executor starts again and its runs write on
    let logs = RunLogs::new(dir.path());
    logs.run(0, 3).raw(b"after the restart\n");
    assert_eq!(logs.read(0, 3, 1).log_content, "whole\nafter the restart\n");
    assert_eq!(logs.read(0, 4, 1).log_content, "cut sh\n");
}

#[test]
fn stream_output_is_written_in_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let mut out = LineBuffer::new(logs.run(0, 4));
    let mut err = LineBuffer::new(logs.run(0, 4));
    out.feed(b"out one\nout t");
    err.feed(b"err one\n");
    out.feed(b"wo\nlast");
    out.finish();
    err.finish();
    assert_eq!(
        logs.read(0, 4, 1).log_content,
        "out one\nerr one\nout two\nlast\n"
    );
    let mut long = LineBuffer::new(logs.run(0, 5));
    long.feed(&vec![b'y'; PENDING_MAX + 1]);
    assert_eq!(
        logs.read(0, 5, 1).to_line_num,
        1,
        "a line without end is bounded"
    );
}

#[test]
fn a_removed_day_folder_is_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let log = logs.run(0, 1);
    log.raw(b"before\n");
    std::fs::remove_dir_all(log.path().parent().unwrap()).unwrap();
    // an open segment stays open for a while; its entry is refreshed on the next open
    logs.open
        .lock()
        .unwrap()
        .1
        .values_mut()
        .for_each(|s| s.opened -= REOPEN_AFTER);
    log.raw(b"after\n");
    assert_eq!(logs.read(0, 1, 1).log_content, "after\n");
}

mod proptests {
    use proptest::prelude::*;

    use super::*;

    /// Trigger times: any `i64`, the span a real admin sends, and the edges.
    fn log_date_time() -> impl Strategy<Value = i64> {
        prop_oneof![
            any::<i64>(),
            0i64..4_102_444_800_000,
            prop::sample::select(vec![i64::MIN, i64::MAX, -1, 0]),
        ]
    }

    /// `/log` with any time, id and first line: the page of a log that exists, or the "not
    /// exists" answer; never a panic, and never a file outside the log folder.
    #[test]
    fn any_log_request_is_answered() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let base = dir.path();
        // one store for every case, as the executor keeps one (its indexes included)
        let logs = RunLogs::new(base);
        logs.run(0, 5).raw(b"one\ntwo\n");
        proptest!(ProptestConfig::with_cases(10_000), |(
            date in log_date_time(),
            id in prop_oneof![Just(5i64), any::<i64>()],
            from in any::<i32>(),
        )| {
            for path in [segment_path(base, date, id), legacy_path(base, date, id)] {
                prop_assert!(path.starts_with(base));
                prop_assert_eq!(path.components().count(), base.components().count() + 2);
            }
            let page = logs.read(date, id, from);
            prop_assert_eq!(page.from_line_num, from);
            if page.is_end {
                prop_assert_eq!(page, LogResult::not_exists(from));
            } else {
                prop_assert!(page.to_line_num == 0 || page.to_line_num >= from.max(1));
                prop_assert!(page.to_line_num <= 2);
            }
        });
    }
}

#[test]
fn dropped_runs_lose_their_lines_and_the_others_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    for id in [5, 6, 7] {
        logs.run(0, id).line(&format!("run {id}"));
        logs.run(0, id).raw(b"second line\n");
    }
    // a run of another segment, alone in it, and one in the earlier layout
    logs.run(0, 2_000).line("alone");
    let legacy = segment::legacy_path(dir.path(), 0, 9);
    std::fs::write(&legacy, "old\n").unwrap();
    let segment = logs.run(0, 5).path().to_path_buf();
    assert!(
        logs.read(0, 6, 1).log_content.contains("run 6"),
        "its index is built"
    );

    let found = logs
        .drop_runs(&[(0, 6), (0, 2_000), (0, 9), (0, 8)])
        .unwrap();
    assert_eq!(found, 3, "8 never had lines");
    assert_eq!(logs.read(0, 6, 1), LogResult::not_exists(1));
    assert_eq!(logs.read(0, 2_000, 1), LogResult::not_exists(1));
    assert_eq!(logs.read(0, 9, 1), LogResult::not_exists(1));
    assert!(!legacy.exists());
    assert!(
        !logs.run(0, 2_000).path().exists(),
        "a segment left empty is removed"
    );
    for id in [5, 7] {
        let page = logs.read(0, id, 1);
        assert_eq!(page.to_line_num, 2, "{page:?}");
        assert!(page.log_content.contains(&format!("run {id}")));
    }
    let text = std::fs::read_to_string(&segment).unwrap();
    assert!(!text.lines().any(|l| l.starts_with("6 ")), "{text}");
    let names: Vec<_> = std::fs::read_dir(segment.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "no temporary left: {names:?}"
    );

    // appends after the drop go to the rewritten segment
    logs.run(0, 5).line("after");
    assert_eq!(logs.read(0, 5, 1).to_line_num, 3);
    assert_eq!(
        logs.drop_runs(&[(0, 6)]).unwrap(),
        0,
        "dropping again finds nothing"
    );
}

#[test]
fn appends_during_drops_are_never_lost() {
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    for id in 0..100 {
        logs.run(0, id).line("to drop");
    }
    let writer = {
        let logs = logs.clone();
        std::thread::spawn(move || {
            for n in 0..2_000 {
                logs.run(0, 500).line(&format!("line {n}"));
            }
        })
    };
    for id in 0..100 {
        logs.drop_runs(&[(0, id)]).unwrap();
    }
    writer.join().unwrap();
    assert_eq!(logs.read(0, 500, 1).to_line_num, 2_000);
    for id in 0..100 {
        assert_eq!(logs.read(0, id, 1), LogResult::not_exists(1));
    }
}

#[test]
fn reads_during_drops_never_lose_a_kept_run() {
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    // even runs are kept, odd ones dropped one after another while a reader reads the newest
    // kept run: a read that opened the segment just before a drop replaced it must not leave
    // behind an index of the old file, past whose length the next runs' lines would be missed
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    let newest_kept = Arc::new(AtomicI64::new(-1));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (logs, newest_kept, stop) = (logs.clone(), newest_kept.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut missed = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let id = newest_kept.load(Ordering::SeqCst);
                if id >= 0 && logs.read(0, id, 1).to_line_num != 2 {
                    missed.push(id);
                }
            }
            missed
        })
    };
    for kept in (0..800).step_by(2) {
        for id in [kept, kept + 1] {
            logs.run(0, id).line(&format!("run {id} starts"));
            logs.run(0, id).line(&format!("run {id} ends"));
        }
        newest_kept.store(kept, Ordering::SeqCst);
        logs.drop_runs(&[(0, kept + 1)]).unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let missed = reader.join().unwrap();
    assert!(
        missed.is_empty(),
        "reads that missed a kept run: {missed:?}"
    );
    for kept in (0..800).step_by(2) {
        assert_eq!(logs.read(0, kept, 1).to_line_num, 2, "run {kept}");
    }
}

#[test]
fn an_index_of_a_replaced_segment_is_built_again_though_the_length_matches() {
    // an index read from the segment before a drop rewrote it, then the new file grown back
    // to the old length by a run whose lines are as long as the dropped run's
    let dir = tempfile::tempdir().unwrap();
    let logs = RunLogs::new(dir.path());
    for id in [1, 2] {
        logs.run(0, id).line("run starts");
        logs.run(0, id).line("run ends");
    }
    let path = segment_path(dir.path(), 0, 1);
    let old_len = std::fs::metadata(&path).unwrap().len();
    let mut before = File::open(&path).unwrap();
    logs.drop_runs(&[(0, 1)]).unwrap();
    let index = logs.index_of(&path, false, 2);
    index.lock().unwrap().catch_up(&mut before).unwrap();
    drop(before);
    logs.run(0, 3).line("run starts");
    logs.run(0, 3).line("run ends");
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        old_len,
        "the new segment has the length the index read"
    );
    assert_eq!(logs.read(0, 3, 1).to_line_num, 2, "run 3 is found");
    assert_eq!(logs.read(0, 2, 1).to_line_num, 2, "run 2 is found");
    assert_eq!(logs.read(0, 1, 1), LogResult::not_exists(1));
}
