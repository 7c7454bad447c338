//! The step a second ahead: a batch's jobs, groups and live executors read once, the executors a
//! trigger may use chosen, and its run rows inserted.

use super::routing_cache::{group_addresses, RoutingCache, RoutingRows};
use super::*;

pub(super) fn skipped(error: String) -> Prepared {
    Prepared::Skipped(TriggerReport {
        error: Some(error),
        ..Default::default()
    })
}

/// Prepares a batch of triggers with a few statements rather than a few per trigger: reads of the
/// jobs by chunks of ids, one of each group and of each group's live executors, and multi-row
/// log inserts by chunks of rows.
/// The log rows' trigger time is now, or for fires prepared `ahead` of their time that time.
/// Results are in the order of `triggers`; replies are left to the caller.
pub async fn prepare_batch(env: &TriggerEnv, triggers: Vec<Trigger>, ahead: bool) -> Vec<Prepared> {
    let count = triggers.len();
    let claims: Vec<ClaimKey> = triggers.iter().filter_map(Trigger::claim).collect();
    let admin_address = env.admin_address.clone();
    let routing = env.routing.clone();
    let result = env
        .store
        .run(move |store| async move {
            prepare_in_db(&store, &routing, triggers, ahead, &admin_address).await
        })
        .await;
    match result {
        Ok(prepared) => {
            for p in &prepared {
                if let Prepared::Skipped(TriggerReport {
                    admission: Some(admission),
                    log_ids,
                    ..
                }) = p
                {
                    env.metrics.admitted(*admission, log_ids.len());
                }
            }
            prepared
        }
        Err(e) => {
            let level = env.store.failure_level(log::Level::Error);
            log::log!(level, "{count} trigger(s) failed: cannot prepare them: {e}");
            // their fire times stay claimed by this live admin, which no one takes over:
            // handed back, they follow the misfire rules at the next pass of any admin; only
            // those still its own (another admin may have taken them over meanwhile)
            if !claims.is_empty() {
                let what = format!("{} claimed fire time(s) handed back", claims.len());
                let node_id = env.node_id.clone();
                until_written(&env.store, what, move |s| {
                    let (claims, node_id) = (claims.clone(), node_id.clone());
                    async move { s.hand_back_own_claims(&node_id, &claims).await.map(drop) }
                });
            }
            (0..count).map(|_| skipped(e.to_string())).collect()
        }
    }
}

pub(super) async fn prepare_in_db(
    store: &Store,
    routing: &RoutingCache,
    triggers: Vec<Trigger>,
    ahead: bool,
    admin_address: &str,
) -> Result<Vec<Prepared>, crate::store::StoreError> {
    // a workflow node's fire carries its job, read by the move that claimed it
    let mut jobs: HashMap<i32, Arc<JobInfo>> = triggers
        .iter()
        .filter_map(|t| Some(t.node.as_ref()?.job.clone()))
        .map(|j| (j.id, j))
        .collect();
    let mut job_ids: Vec<i32> = (triggers.iter().map(|t| t.job_id))
        .filter(|id| !jobs.contains_key(id))
        .collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    if !job_ids.is_empty() {
        let read = store.get_jobs(&job_ids).await?;
        jobs.extend(read.into_iter().map(|j| (j.id, Arc::new(j))));
    }
    let now = now_ms();
    let mut group_ids: Vec<i32> = jobs.values().map(|j| j.job_group).collect();
    group_ids.sort_unstable();
    group_ids.dedup();
    // the runner's batches of node fires come many a second: they share what routing reads
    let node_batch = triggers.iter().all(|t| t.node.is_some());
    let writes = store.routing_writes();
    let cached = match node_batch {
        true => routing.get(&group_ids, writes, now),
        false => None,
    };
    let rows: Arc<RoutingRows> = match cached {
        Some(rows) => rows,
        None => {
            let rows = read_routing(store, &group_ids, now).await?;
            if node_batch {
                routing.keep(&rows, writes, now);
            }
            Arc::new(rows)
        }
    };
    // executors being drained (`cordoned`): no new run goes to them
    let (groups, live, cordoned) = (&rows.groups, &rows.live, &rows.cordons);
    let mut group_targets: HashMap<i32, Arc<Targets>> = HashMap::new();

    let mut out: Vec<Prepared> = Vec::with_capacity(triggers.len());
    let mut new_logs: Vec<NewRunRow> = Vec::new();
    // claims of pre-read fires that will not fire: released with the log rows' insert
    let mut dropped: Vec<ClaimKey> = Vec::new();
    // fires under an instance cap: (their place in `out`, their rows, the caps)
    let mut limited: Vec<(usize, Vec<NewRunRow>, InstanceCaps)> = Vec::new();
    for msg in triggers {
        let Some(job) = jobs.get(&msg.job_id).cloned() else {
            log::warn!(
                "trigger of job {} skipped: the job does not exist",
                msg.job_id
            );
            dropped.extend(msg.claim());
            out.push(skipped(format!("job {} not found", msg.job_id)));
            continue;
        };
        // a fire time pre-read before the job was stopped must not run after the stop
        // (a queued fire has its row and its slot: it runs, as it would have when it came)
        let scheduled = matches!(msg.trigger_type, TriggerType::Cron | TriggerType::Misfire)
            && msg.dequeued.is_none();
        if scheduled && job.trigger_status != TRIGGER_STATUS_RUNNING {
            log::debug!(
                "job {} stopped: its pre-read fire time {} is dropped",
                job.id,
                msg.schedule_time
            );
            dropped.extend(msg.claim());
            out.push(skipped(format!("job {} is stopped", job.id)));
            continue;
        }
        let group = groups.get(&job.job_group).cloned().flatten();
        let own = group_targets
            .entry(job.job_group)
            .or_insert_with(|| Arc::new(targets_of(group.as_deref(), live)))
            .clone();
        let targets = match msg.address_list.as_deref().filter(|l| !l.is_empty()) {
            Some(list) => {
                let chosen = chosen_targets(list, group.as_deref(), &own);
                if !chosen.refused.is_empty() {
                    log::warn!(
                        "job {} trigger: address(es) {} left out: not an executor of its group",
                        job.id,
                        chosen.refused.join(", ")
                    );
                }
                Arc::new(chosen)
            }
            None => own,
        };
        let targets = match job.executor_selector.as_str() {
            "" => targets,
            selector => Arc::new(selected_targets(&targets, selector, group.as_deref(), live)),
        };
        let drained = |a: &String| cordoned.contains_key(&address_key(a));
        let targets = match targets.addresses.iter().any(drained) {
            true => Arc::new(uncordoned_targets(&targets, cordoned)),
            false => targets,
        };
        let fail_retry_count = msg
            .fail_retry_count
            .filter(|c| *c >= 0)
            .unwrap_or(job.executor_fail_retry_count);
        let param = msg
            .executor_param
            .clone()
            .unwrap_or_else(|| job.executor_param.clone());
        let trigger_time = match (msg.resend, ahead) {
            // the row keeps the time its executor was first sent, where it files the run's log
            (Some(resend), _) => resend.trigger_time,
            (None, _) if msg.dequeued.is_some() => msg.dequeued.map_or(now, |d| d.trigger_time),
            (None, true) => msg.schedule_time.max(now),
            (None, false) => now,
        };
        let shard = msg.sharding_param.as_deref().and_then(parse_shard);
        let indexes: Vec<(i32, i32)> = if job.executor_route_strategy
            == RouteStrategy::ShardingBroadcast
            && !targets.addresses.is_empty()
            && shard.is_none()
        {
            let total = targets.addresses.len() as i32;
            (0..total).map(|i| (i, total)).collect()
        } else {
            vec![shard.unwrap_or((0, 1))]
        };
        // a workflow node fires the one run row its claim inserted, a resend its row
        let existing_row = msg
            .node
            .as_ref()
            .map(|n| n.log_id)
            .or(msg.resend.map(|r| r.log_id))
            .or(msg.dequeued.map(|d| d.log_id));
        // a job (or group) with an instance cap has its rows inserted by admission, one fire
        // per transaction; the others in the batch's multi-row inserts
        let caps = match existing_row {
            Some(_) => None,
            None => InstanceCaps::of(&job, group.as_deref()),
        };
        let mut admitted_rows = Vec::new();
        let indexes = match existing_row {
            Some(_) => vec![(0, 1)],
            None => indexes,
        };
        let broadcast = job.executor_route_strategy == RouteStrategy::ShardingBroadcast;
        let mut shards = Vec::with_capacity(indexes.len());
        for (index, total) in indexes {
            let head = MessageHead {
                job: &job,
                trigger_type: msg.trigger_type,
                admin_address,
                targets: &targets,
                index,
                total,
                fail_retry_count,
            };
            if let Some(log_id) = existing_row {
                shards.push(Shard {
                    index,
                    total,
                    log_id,
                    message_head: head.to_string(),
                });
                continue;
            }
            let rows = match caps {
                Some(_) => &mut admitted_rows,
                None => &mut new_logs,
            };
            rows.push(NewRunRow {
                job_group: job.job_group,
                job_id: job.id,
                trigger_type: msg.trigger_type,
                schedule_time: msg.schedule_time,
                trigger_time,
                executor_handler: Some(job.executor_handler.clone()),
                executor_param: Some(param.clone()),
                executor_sharding_param: broadcast.then(|| format!("{index}/{total}")),
                executor_fail_retry_count: fail_retry_count,
                trigger_msg: Some(head.to_string()),
            });
            shards.push(Shard {
                index,
                total,
                log_id: 0,
                message_head: String::new(),
            });
        }
        if let Some(caps) = caps {
            limited.push((out.len(), admitted_rows, caps));
        }
        out.push(Prepared::Ready(Box::new(PreparedTrigger {
            trigger: msg,
            job,
            group,
            targets,
            param,
            trigger_time,
            shards,
            replaced: Vec::new(),
        })));
    }

    store.release_claims(&dropped).await?;
    let mut ids = store.insert_logs(&new_logs).await?.into_iter();
    // the rows were pushed in shard order: each shard takes its id and its message head back
    let mut heads = new_logs
        .into_iter()
        .map(|l| l.trigger_msg.unwrap_or_default());
    let admitted_apart: HashSet<usize> = limited.iter().map(|(i, _, _)| *i).collect();
    for (i, p) in out.iter_mut().enumerate() {
        if let Prepared::Ready(p) = p {
            let t = &p.trigger;
            if t.node.is_some() || t.resend.is_some() || t.dequeued.is_some() {
                continue;
            }
            if admitted_apart.contains(&i) {
                continue;
            }
            for shard in &mut p.shards {
                shard.log_id = ids.next().unwrap_or_default();
                shard.message_head = heads.next().unwrap_or_default();
            }
        }
    }
    admit_limited(store, &mut out, limited).await?;
    Ok(out)
}

/// Inserts the rows of fires under an instance cap through admission, each fire in a
/// transaction of its own; a fire not admitted becomes a report of why (its claim released
/// with it: the row records the fire).
async fn admit_limited(
    store: &Store,
    out: &mut [Prepared],
    limited: Vec<(usize, Vec<NewRunRow>, InstanceCaps)>,
) -> Result<(), crate::store::StoreError> {
    let mut released = Vec::new();
    for (i, rows, caps) in limited {
        let Some(Prepared::Ready(p)) = out.get_mut(i) else {
            continue;
        };
        match store.admit(&rows, &caps, now_ms()).await? {
            Admitted::Ran { ids, replaced } => {
                for ((shard, id), row) in p.shards.iter_mut().zip(ids).zip(rows) {
                    shard.log_id = id;
                    shard.message_head = row.trigger_msg.unwrap_or_default();
                }
                if !replaced.is_empty() {
                    log::info!(
                        "job {}: run(s) {:?} replaced to make room (instanceOverflow REPLACE)",
                        caps.job_id,
                        replaced.iter().map(|r| r.log_id).collect::<Vec<_>>()
                    );
                }
                p.replaced = replaced;
            }
            Admitted::NotRun {
                admission,
                ids,
                why,
            } => {
                log::info!("job {} fire {admission}: {why} (log {ids:?})", caps.job_id);
                released.extend(p.claim());
                let code = match admission {
                    Admission::Queued => 0,
                    _ => FAIL_CODE,
                };
                let codes = vec![code; ids.len()];
                out[i] = Prepared::Skipped(TriggerReport {
                    log_ids: ids,
                    codes,
                    error: Some(why),
                    admission: Some(admission),
                });
            }
        }
    }
    store.release_claims(&released).await
}

/// The groups `ids`, the live registrations of the AUTO ones and the cordons, as the database
/// holds them now.
async fn read_routing(
    store: &Store,
    ids: &[i32],
    now: i64,
) -> Result<RoutingRows, crate::store::StoreError> {
    let since = now - EXECUTOR_DEAD_AFTER_MS;
    let mut rows = RoutingRows::default();
    for &id in ids {
        let group = store.get_group(id).await?.map(Arc::new);
        if let Some(g) = &group {
            if g.address_type == AddressType::Auto && !rows.live.contains_key(&g.app_name) {
                let found = store.find_live_registry_for(&g.app_name, since).await?;
                rows.live.insert(g.app_name.clone(), Arc::new(found));
            }
        }
        rows.groups.insert(id, group);
    }
    rows.cordons = store.cordons_by_address_key().await?;
    Ok(rows)
}

/// The executors of a group: its live registrations (automatic) or its fixed list (manual).
pub(super) fn targets_of(
    group: Option<&JobGroup>,
    live_by_app: &HashMap<String, Arc<Vec<Registration>>>,
) -> Targets {
    let Some(group) = group else {
        return Targets {
            addresses: Vec::new(),
            protocols: Vec::new(),
            registry_type: "Automatic registration",
            refused: Vec::new(),
            selector: None,
            cordoned: Vec::new(),
            left_out: Vec::new(),
        };
    };
    let empty = Vec::new();
    let live: &[Registration] = live_by_app
        .get(&group.app_name)
        .map(|l| l.as_slice())
        .unwrap_or(&empty);
    let protocol = |value: &str| {
        live.iter()
            .find(|r| r.registry_value == value)
            .and_then(|r| AdminProtocol::parse(&r.protocol))
            .unwrap_or(AdminProtocol::V2)
    };
    let addresses: Vec<String> = group_addresses(group, live_by_app)
        .map(str::to_string)
        .collect();
    let protocols = addresses.iter().map(|a| protocol(a)).collect();
    Targets {
        addresses,
        protocols,
        registry_type: match group.address_type {
            AddressType::Auto => "Automatic registration",
            AddressType::Manual => "Manual entry",
        },
        refused: Vec::new(),
        selector: None,
        cordoned: Vec::new(),
        left_out: Vec::new(),
    }
}

/// The executors of a trigger that names its own: only those the group has (registered now, or
/// in its address list), so that the group's token never goes to an address of the caller's
/// choosing; the others are left out and named.
pub(super) fn chosen_targets(list: &[String], group: Option<&JobGroup>, own: &Targets) -> Targets {
    let known: HashMap<String, (&str, AdminProtocol)> = own
        .addresses
        .iter()
        .zip(&own.protocols)
        .map(|(a, p)| (address_key(a), (a.as_str(), *p)))
        .chain(
            group
                .map(|g| g.address_list.as_slice())
                .unwrap_or_default()
                .iter()
                .map(|a| (address_key(a), (a.as_str(), AdminProtocol::V2))),
        )
        .rev() // a live registration's protocol wins over the listed copy of its address
        .collect();
    let mut chosen = Targets {
        addresses: Vec::new(),
        protocols: Vec::new(),
        registry_type: "Manual entry",
        refused: Vec::new(),
        selector: None,
        cordoned: Vec::new(),
        left_out: Vec::new(),
    };
    for asked in list {
        match known.get(&address_key(asked)) {
            Some((address, protocol)) if !chosen.addresses.iter().any(|a| a == address) => {
                chosen.addresses.push(address.to_string());
                chosen.protocols.push(*protocol);
            }
            Some(_) => {}
            None => chosen.refused.push(asked.clone()),
        }
    }
    chosen
}

/// The executors of `targets` whose labels (as their latest beat reported them) match the job's
/// `selector`, in the same order; an address with no live registration has no labels.
pub(super) fn selected_targets(
    targets: &Targets,
    selector: &str,
    group: Option<&JobGroup>,
    live: &HashMap<String, Arc<Vec<Registration>>>,
) -> Targets {
    // a selector is checked when saved: one that no longer parses selects nothing, and says so
    let (parsed, named) = match Selector::parse(selector) {
        Ok(parsed) => (Some(parsed), selector.to_string()),
        Err(why) => {
            log::warn!("executor selector '{selector}' unreadable ({why}): no executor matches");
            (None, format!("{selector} (unreadable: {why})"))
        }
    };
    let none = Labels::new();
    let registrations = group
        .and_then(|g| live.get(&g.app_name))
        .map(|l| l.as_slice())
        .unwrap_or_default();
    let labels_of = |address: &str| {
        registrations
            .iter()
            .find(|r| r.registry_value == address)
            .map_or(&none, |r| &r.labels)
    };
    let mut chosen = targets.narrowed(|a| parsed.as_ref().is_some_and(|s| s.matches(labels_of(a))));
    chosen.selector = Some(named);
    chosen
}

/// The executors of `targets` that are not cordoned (`cordoned` holds the cordons by their
/// [`address_key`]s); those that are are named for the run's message.
pub(super) fn uncordoned_targets(
    targets: &Targets,
    cordoned: &HashMap<String, ExecutorCordon>,
) -> Targets {
    let mut chosen = targets.narrowed(|a| !cordoned.contains_key(&address_key(a)));
    let left: Vec<String> = targets
        .addresses
        .iter()
        .filter(|a| !chosen.addresses.contains(a))
        .cloned()
        .collect();
    chosen.cordoned.extend(left);
    chosen
}

/// `"i/n"` → (i, n), when well-formed.
pub(super) fn parse_shard(s: &str) -> Option<(i32, i32)> {
    let (i, n) = s.split_once('/')?;
    let (i, n) = (i.trim().parse::<i32>().ok()?, n.trim().parse::<i32>().ok()?);
    (n > 0 && i >= 0 && i < n).then_some((i, n))
}
