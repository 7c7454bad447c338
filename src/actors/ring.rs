//! RingActor: 60 one-second slots of pre-read fire times (XXL-JOB's ring thread).
//!
//! The tick is re-armed to the next wall-clock second each time, so it never drifts; each tick
//! drains the current and the two previous slots, so a late tick loses nothing. Entries carry
//! their own fire time: one that is not yet due stays in its slot.

use std::time::Duration;

use actix::prelude::*;

use super::dispatch::{Dispatcher, Trigger};
use crate::clock::now_ms;
use crate::model::TriggerType;

/// Slots in the ring: one per second of a minute.
pub const SLOTS: usize = 60;
/// Slots drained per tick: the current one and those a late tick may have skipped.
const SLOTS_PER_TICK: i64 = 3;

/// Put a fire time into the ring.
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
#[rtype(result = "()")]
pub struct Schedule {
    /// The job.
    pub job_id: i32,
    /// When it fires, epoch ms.
    pub fire_time: i64,
}

/// How many fire times wait in the ring (shutdown waits for zero).
#[derive(Message, Debug)]
#[rtype(result = "usize")]
pub struct PendingCount;

/// The ring; supervised.
pub struct RingActor {
    slots: Vec<Vec<Schedule>>,
    dispatcher: Addr<Dispatcher>,
}

impl RingActor {
    /// An empty ring dispatching to `dispatcher`.
    pub fn new(dispatcher: Addr<Dispatcher>) -> Self {
        RingActor {
            slots: vec![Vec::new(); SLOTS],
            dispatcher,
        }
    }

    fn arm(&self, ctx: &mut Context<Self>) {
        // 1 ms past the boundary, so the wall clock has surely entered the new second
        let wait = 1_000 - now_ms().rem_euclid(1_000) + 1;
        ctx.run_later(Duration::from_millis(wait as u64), |act, ctx| {
            act.tick(now_ms());
            act.arm(ctx);
        });
    }

    /// Fires every entry due at `now` from the current and the previous slots.
    fn tick(&mut self, now: i64) {
        for entry in self.take_due(now) {
            let late = now - entry.fire_time;
            if late > 1_500 {
                log::warn!(
                    "job {} fired {late} ms after its time {}",
                    entry.job_id,
                    entry.fire_time
                );
            }
            self.dispatcher.do_send(Trigger::new(
                entry.job_id,
                TriggerType::Cron,
                entry.fire_time,
            ));
        }
    }

    fn take_due(&mut self, now: i64) -> Vec<Schedule> {
        take_due_from(&mut self.slots, now)
    }

    fn pending(&self) -> usize {
        self.slots.iter().map(Vec::len).sum()
    }
}

/// Removes and returns the entries of the current and previous slots whose second has come.
fn take_due_from(slots: &mut [Vec<Schedule>], now: i64) -> Vec<Schedule> {
    let second = now.div_euclid(1_000);
    let mut due_all = Vec::new();
    for back in 0..SLOTS_PER_TICK {
        let slot = (second - back).rem_euclid(SLOTS as i64) as usize;
        if slots[slot].is_empty() {
            continue;
        }
        let entries = std::mem::take(&mut slots[slot]);
        let (due, later): (Vec<Schedule>, Vec<Schedule>) = entries
            .into_iter()
            .partition(|e| e.fire_time.div_euclid(1_000) <= second);
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
        self.arm(ctx);
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        let pending = self.pending();
        if pending > 0 {
            log::warn!("ring stopped with {pending} fire time(s) not dispatched");
        }
    }
}

impl Supervised for RingActor {
    fn restarting(&mut self, _ctx: &mut Self::Context) {
        log::warn!("ring actor restarting");
    }
}

impl Handler<Schedule> for RingActor {
    type Result = ();

    fn handle(&mut self, msg: Schedule, _ctx: &mut Self::Context) {
        let slot = msg.fire_time.div_euclid(1_000).rem_euclid(SLOTS as i64) as usize;
        self.slots[slot].push(msg);
        // an entry whose second already passed (a slow pre-read) must not wait a whole minute
        if msg.fire_time <= now_ms() {
            self.tick(now_ms());
        }
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
    fn due_entries_leave_and_later_ones_stay() {
        let mut slots = vec![Vec::new(); SLOTS];
        let base = 1_700_000_000_000_i64; // a whole second
        let slot = |t: i64| (t / 1_000 % 60) as usize;
        slots[slot(base)].push(Schedule {
            job_id: 1,
            fire_time: base,
        });
        slots[slot(base - 1_000)].push(Schedule {
            job_id: 2,
            fire_time: base - 1_000,
        });
        slots[slot(base + 1_000)].push(Schedule {
            job_id: 3,
            fire_time: base + 1_000,
        });
        // the same slot a minute later is not due
        slots[slot(base)].push(Schedule {
            job_id: 4,
            fire_time: base + 60_000,
        });
        let ids = |v: Vec<Schedule>| {
            let mut ids: Vec<i32> = v.iter().map(|e| e.job_id).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(ids(take_due_from(&mut slots, base + 5)), vec![1, 2]);
        assert_eq!(ids(take_due_from(&mut slots, base + 1_003)), vec![3]);
        assert!(take_due_from(&mut slots, base + 1_500).is_empty());
        assert_eq!(slots.iter().map(Vec::len).sum::<usize>(), 1);
    }
}
