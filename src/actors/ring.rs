//! RingActor: 60 one-second slots of pre-read fire times (XXL-JOB's ring thread).
//!
//! The tick is re-armed to [`HAND_OVER_AT_MS`] into each wall-clock second, so it never drifts.
//! Each tick hands the dispatcher, as one batch, every entry of the two previous slots, the
//! current one and the next [`LEAD_SECONDS`]: the dispatcher prepares them (job read, log rows)
//! during the remaining time and calls each executor at its entry's own fire time, so the
//! database work of a second's fires is done before that second starts, and not while the
//! current second's calls go out. A late tick loses nothing. Entries carry their own fire
//! time: one not yet handed over (a minute later in the same slot) stays.

use std::time::Duration;

use actix::prelude::*;

use std::sync::Arc;

use super::dispatch::{Dispatcher, Trigger, TriggerBatch};
use super::supervision::{answers_probes, ActorLife};
use crate::clock::now_ms;
use crate::metrics::AdminMetrics;
use crate::model::TriggerType;

/// Slots in the ring: one per second of a minute.
pub const SLOTS: usize = 60;
/// Slots drained behind the current one: those a late tick may have skipped.
const SLOTS_BEHIND: i64 = 2;
/// Whole seconds ahead whose fires are handed over for preparation. With the tick at
/// [`HAND_OVER_AT_MS`], one gives a second's fires at least half a second to be prepared; a job
/// stopped in that time still fires once (as in XXL-JOB, whose trigger does not re-check the
/// status).
pub const LEAD_SECONDS: i64 = 1;
/// Where in each second the tick falls: halfway, away from the top of the second where cron
/// fires (whole seconds) make their executor calls, so the next second's preparation (job
/// reads, log inserts) does not compete with them for the CPU.
pub const HAND_OVER_AT_MS: i64 = 500;

/// One fire time in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireTime {
    /// The job.
    pub job_id: i32,
    /// When it fires, epoch ms.
    pub fire_time: i64,
}

/// Many fire times at once (one pre-read pass's).
#[derive(Message, Debug, Clone, PartialEq, Eq)]
#[rtype(result = "()")]
pub struct ScheduleAll(pub Vec<FireTime>);

/// How many fire times wait in the ring (shutdown waits for zero).
#[derive(Message, Debug)]
#[rtype(result = "usize")]
pub struct PendingCount;

/// The ring; supervised.
pub struct RingActor {
    slots: Vec<Vec<FireTime>>,
    dispatcher: Addr<Dispatcher>,
    /// The last second whose entries were handed over; later arrivals for it go at once.
    handed_through: i64,
    life: ActorLife,
    metrics: Arc<AdminMetrics>,
}

impl RingActor {
    /// An empty ring dispatching to `dispatcher`, showing its occupancy in `metrics`.
    pub fn new(dispatcher: Addr<Dispatcher>, metrics: Arc<AdminMetrics>) -> Self {
        RingActor {
            slots: vec![Vec::new(); SLOTS],
            dispatcher,
            handed_through: i64::MIN,
            life: ActorLife::detached("ring"),
            metrics,
        }
    }

    /// Reports its life on an admin's board instead of one of its own.
    pub fn with_life(self, life: ActorLife) -> Self {
        RingActor { life, ..self }
    }

    fn arm(&self, ctx: &mut Context<Self>) {
        let wait = wait_for_tick(now_ms());
        ctx.run_later(Duration::from_millis(wait), |act, ctx| {
            act.tick(now_ms());
            act.arm(ctx);
        });
    }

    /// Hands over every entry due by the end of `now`'s second plus [`LEAD_SECONDS`].
    fn tick(&mut self, now: i64) {
        let through = now.div_euclid(1_000) + LEAD_SECONDS;
        let from = first_slot_second(self.handed_through, through);
        self.handed_through = self.handed_through.max(through);
        let entries = take_through(&mut self.slots, from, through);
        self.hand_over(entries, now);
        self.metrics.ring_occupancy(self.pending());
    }

    fn hand_over(&self, entries: Vec<FireTime>, now: i64) {
        if entries.is_empty() {
            return;
        }
        let mut triggers = Vec::with_capacity(entries.len());
        for entry in entries {
            let late = now - entry.fire_time;
            if late > 1_500 {
                log::warn!(
                    "job {} fired {late} ms after its time {}",
                    entry.job_id,
                    entry.fire_time
                );
            }
            triggers.push(Trigger::new(
                entry.job_id,
                TriggerType::Cron,
                entry.fire_time,
            ));
        }
        self.dispatcher.do_send(TriggerBatch {
            triggers,
            ahead: true,
        });
    }

    fn add(&mut self, entries: Vec<FireTime>) {
        // an entry whose second was already handed over (a slow pre-read) must not wait a minute
        let mut now_due = Vec::new();
        for entry in entries {
            if entry.fire_time.div_euclid(1_000) <= self.handed_through {
                now_due.push(entry);
            } else {
                let slot = entry.fire_time.div_euclid(1_000).rem_euclid(SLOTS as i64) as usize;
                self.slots[slot].push(entry);
            }
        }
        self.hand_over(now_due, now_ms());
        self.metrics.ring_occupancy(self.pending());
    }

    fn pending(&self) -> usize {
        self.slots.iter().map(Vec::len).sum()
    }
}

/// Milliseconds from `now` to the next tick, [`HAND_OVER_AT_MS`] into a second (never 0, so a
/// tick that ran early re-arms for the next second rather than firing again).
fn wait_for_tick(now: i64) -> u64 {
    let into = now.rem_euclid(1_000);
    let wait = (HAND_OVER_AT_MS - into).rem_euclid(1_000);
    if wait == 0 {
        1_000
    } else {
        wait as u64
    }
}

/// The first second whose slot a tick handing over through `through` drains, the last tick having
/// handed over through `handed`: [`SLOTS_BEHIND`] seconds before the current one, or every
/// second since the last tick when ticks were missed (the process paused), so that what the
/// skipped slots hold goes now rather than a minute late when the ring comes round to them.
fn first_slot_second(handed: i64, through: i64) -> i64 {
    let usual = through - LEAD_SECONDS - SLOTS_BEHIND;
    handed
        .saturating_add(1)
        .min(usual)
        .max(through - SLOTS as i64 + 1)
}

/// Removes and returns the entries whose second is at most `through`, from the slots of the
/// seconds `from` to `through`.
fn take_through(slots: &mut [Vec<FireTime>], from: i64, through: i64) -> Vec<FireTime> {
    let mut due_all = Vec::new();
    for second in from..=through {
        let slot = second.rem_euclid(SLOTS as i64) as usize;
        if slots[slot].is_empty() {
            continue;
        }
        let entries = std::mem::take(&mut slots[slot]);
        let (due, later): (Vec<FireTime>, Vec<FireTime>) = entries
            .into_iter()
            .partition(|e| e.fire_time.div_euclid(1_000) <= through);
        slots[slot] = later;
        due_all.extend(due);
    }
    due_all
}

impl Actor for RingActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(super::UNBOUNDED_MAILBOX);
        log::info!("ring actor started ({SLOTS} slots)");
        self.life.started();
        self.arm(ctx);
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.life.stopped();
        let pending = self.pending();
        if pending > 0 {
            log::warn!("ring stopped with {pending} fire time(s) not dispatched");
        }
    }
}

answers_probes!(RingActor);

impl Supervised for RingActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("ring actor restarting");
    }
}

impl Handler<ScheduleAll> for RingActor {
    type Result = ();

    fn handle(&mut self, msg: ScheduleAll, _ctx: &mut Self::Context) {
        self.add(msg.0);
    }
}

impl Handler<PendingCount> for RingActor {
    type Result = usize;

    fn handle(&mut self, _msg: PendingCount, _ctx: &mut Self::Context) -> usize {
        self.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tick_falls_at_the_hand_over_point_of_the_next_second() {
        let base = 1_700_000_000_000_i64;
        assert_eq!(wait_for_tick(base), HAND_OVER_AT_MS as u64);
        assert_eq!(wait_for_tick(base + HAND_OVER_AT_MS - 1), 1);
        // exactly at the point (or a timer firing a little early) waits for the next second
        assert_eq!(wait_for_tick(base + HAND_OVER_AT_MS), 1_000);
        assert_eq!(wait_for_tick(base + HAND_OVER_AT_MS + 1), 999);
        assert_eq!(wait_for_tick(base + 999), HAND_OVER_AT_MS as u64 + 1);
    }

    #[test]
    fn entries_through_the_lead_leave_and_later_ones_stay() {
        let mut slots = vec![Vec::new(); SLOTS];
        let base = 1_700_000_000_000_i64; // a whole second
        let slot = |t: i64| (t / 1_000 % 60) as usize;
        slots[slot(base)].push(FireTime {
            job_id: 1,
            fire_time: base,
        });
        slots[slot(base - 1_000)].push(FireTime {
            job_id: 2,
            fire_time: base - 1_000,
        });
        slots[slot(base + 1_000)].push(FireTime {
            job_id: 3,
            fire_time: base + 1_000,
        });
        // the same slot a minute later is not due
        slots[slot(base)].push(FireTime {
            job_id: 4,
            fire_time: base + 60_000,
        });
        let ids = |v: Vec<FireTime>| {
            let mut ids: Vec<i32> = v.iter().map(|e| e.job_id).collect();
            ids.sort_unstable();
            ids
        };
        let second = |t: i64| t / 1_000;
        // the tick at `base` hands over its own second and the next one
        let through = |t: i64| second(t) + LEAD_SECONDS;
        let usual = |t: i64| first_slot_second(through(t) - 1, through(t));
        assert_eq!(
            ids(take_through(&mut slots, usual(base), through(base))),
            vec![1, 2, 3]
        );
        let next = base + 1_000;
        assert!(take_through(&mut slots, usual(next), through(next)).is_empty());
        assert_eq!(slots.iter().map(Vec::len).sum::<usize>(), 1);
        // a minute later the last one is handed over
        let later = base + 60_000;
        assert_eq!(
            ids(take_through(&mut slots, usual(later), through(later))),
            vec![4]
        );
    }

    #[test]
    fn ticks_missed_in_a_pause_are_made_up_at_the_next_one() {
        let through = 1_000;
        // ticks every second: the usual seconds behind
        assert_eq!(
            first_slot_second(through - 1, through),
            through - LEAD_SECONDS - SLOTS_BEHIND
        );
        // the last tick 8 s ago: every second since
        assert_eq!(first_slot_second(through - 9, through), through - 8);
        // never more than the ring holds, nor before the first tick
        assert_eq!(
            first_slot_second(through - 500, through),
            through - SLOTS as i64 + 1
        );
        assert_eq!(
            first_slot_second(i64::MIN, through),
            through - SLOTS as i64 + 1
        );
    }

    #[test]
    fn a_fire_in_a_slot_a_pause_skipped_goes_at_the_next_tick() {
        let mut slots = vec![Vec::new(); SLOTS];
        let base = 1_700_000_000_000_i64;
        let entry = FireTime {
            job_id: 7,
            fire_time: base + 3_000,
        };
        let slot = (entry.fire_time / 1_000).rem_euclid(SLOTS as i64) as usize;
        slots[slot].push(entry);
        // handed over through `base`'s second, then a pause until 10 s later
        let handed = base / 1_000;
        let through = (base + 10_000) / 1_000 + LEAD_SECONDS;
        let due = take_through(&mut slots, first_slot_second(handed, through), through);
        assert_eq!(due.len(), 1);
    }
}
