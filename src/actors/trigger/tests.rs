//! Targets, shards, messages and the calls a prepared batch expects.

use super::message::*;
use super::prepare::*;
use super::*;

#[test]
fn a_trigger_may_name_only_the_groups_executors() {
    let own = Targets {
        addresses: vec!["http://10.0.0.1:9999/".into()],
        protocols: vec![AdminProtocol::V35],
        registry_type: "Automatic registration",
        refused: Vec::new(),
        selector: None,
        cordoned: Vec::new(),
        left_out: Vec::new(),
    };
    let mut group = JobGroup {
        id: 1,
        app_name: "app".into(),
        title: "app".into(),
        address_type: AddressType::Auto,
        address_list: vec!["http://10.0.0.2:9999/".into()],
        access_token: None,
        update_time: 0,
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    };
    let asked: Vec<String> = [
        "http://10.0.0.1:9999",    // registered, without its slash
        "http://127.0.0.1:4444/",  // the caller's own listener
        "HTTP://10.0.0.2:9999/",   // listed, in capitals
        "http://10.0.0.1:9999/",   // the first again
        "http://169.254.169.254/", // an internal host
    ]
    .map(String::from)
    .to_vec();
    let chosen = chosen_targets(&asked, Some(&group), &own);
    assert_eq!(
        chosen.addresses,
        ["http://10.0.0.1:9999/", "http://10.0.0.2:9999/"]
    );
    assert_eq!(chosen.protocols, [AdminProtocol::V35, AdminProtocol::V2]);
    assert_eq!(
        chosen.refused,
        ["http://127.0.0.1:4444/", "http://169.254.169.254/"]
    );
    // a group with no executor at all takes none of the caller's
    group.address_list.clear();
    let none = Targets {
        addresses: Vec::new(),
        ..own
    };
    let chosen = chosen_targets(&asked[1..2], Some(&group), &none);
    assert!(chosen.addresses.is_empty());
    assert_eq!(chosen.refused, ["http://127.0.0.1:4444/"]);
    assert!(chosen_targets(&asked, None, &none).addresses.is_empty());
}

#[test]
fn a_selector_keeps_the_executors_whose_labels_match() {
    let address = |i: u8| format!("http://10.0.0.{i}:9999/");
    let targets = Targets {
        addresses: (1..=3).map(address).collect(),
        protocols: vec![AdminProtocol::V2, AdminProtocol::V35, AdminProtocol::V2],
        registry_type: "Automatic registration",
        refused: Vec::new(),
        selector: None,
        cordoned: Vec::new(),
        left_out: Vec::new(),
    };
    let group = JobGroup {
        id: 1,
        app_name: "app".into(),
        title: "app".into(),
        address_type: AddressType::Auto,
        address_list: Vec::new(),
        access_token: None,
        update_time: 0,
        max_concurrent_instances: 0,
        instance_overflow: crate::model::InstanceOverflow::Skip,
    };
    let registration = |i: u8, labels: &[(&str, &str)]| Registration {
        id: i as i64,
        registry_group: "EXECUTOR".into(),
        registry_key: "app".into(),
        registry_value: address(i),
        protocol: "v2".into(),
        update_time: 0,
        load: None,
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    // the third executor is a Java one: no labels
    let live = HashMap::from([(
        "app".to_string(),
        Arc::new(vec![
            registration(1, &[("gpu", "true")]),
            registration(2, &[("gpu", "true"), ("region", "eu")]),
            registration(3, &[]),
        ]),
    )]);
    let chosen = selected_targets(&targets, "gpu=true", Some(&group), &live);
    assert_eq!(chosen.addresses, [address(1), address(2)]);
    assert_eq!(chosen.protocols, [AdminProtocol::V2, AdminProtocol::V35]);
    assert_eq!(chosen.selector.as_deref(), Some("gpu=true"));
    let chosen = selected_targets(&targets, "region in (eu,us)", Some(&group), &live);
    assert_eq!(chosen.addresses, [address(2)]);
    let chosen = selected_targets(&targets, "gpu!=true", Some(&group), &live);
    assert_eq!(chosen.addresses, [address(3)]);
    let chosen = selected_targets(&targets, "tpu exists", Some(&group), &live);
    assert!(chosen.addresses.is_empty());
    // a manual group's listed addresses have no registration, so no labels
    let chosen = selected_targets(&targets, "gpu=true", None, &live);
    assert!(chosen.addresses.is_empty());
    let chosen = selected_targets(&targets, "gpu", Some(&group), &live);
    assert!(chosen.addresses.is_empty());
    assert!(chosen.selector.is_some_and(|s| s.contains("unreadable")));
}

#[test]
fn cordoned_executors_are_left_out_but_still_asked_about_a_resend() {
    let targets = Targets {
        addresses: vec!["http://a:1/".into(), "http://b:1/".into()],
        protocols: vec![AdminProtocol::V2, AdminProtocol::V35],
        registry_type: "Automatic registration",
        refused: Vec::new(),
        selector: None,
        cordoned: Vec::new(),
        left_out: Vec::new(),
    };
    // a cordon matches its address however it was spelled
    let cordon = |address: &str| {
        let c = ExecutorCordon {
            address: address.to_string(),
            since: 1,
            reason: String::new(),
            by_user: "admin".into(),
        };
        (address_key(address), c)
    };
    let cordoned = HashMap::from([cordon("HTTP://b:1")]);
    let chosen = uncordoned_targets(&targets, &cordoned);
    assert_eq!(chosen.addresses, ["http://a:1/"]);
    assert_eq!(chosen.cordoned, ["http://b:1/"]);
    assert_eq!(chosen.all_addresses(), ["http://a:1/", "http://b:1/"]);
    assert_eq!(chosen.protocol_of("http://b:1/"), AdminProtocol::V35);
    let all = HashMap::from([cordon("http://a:1/"), cordon("http://b:1/")]);
    assert!(uncordoned_targets(&targets, &all).addresses.is_empty());
}

#[test]
fn long_address_lists_are_summed_up_in_messages() {
    let many: Vec<String> = (0..25).map(|i| format!("http://h{i}/")).collect();
    let shown = AddressSummary(&many).to_string();
    assert!(shown.starts_with("http://h0/, http://h1/"));
    assert!(shown.contains("http://h19/") && !shown.contains("http://h20/"));
    assert!(shown.ends_with(", … (25 in all)"));
    assert_eq!(
        AddressSummary(&many[..2]).to_string(),
        "http://h0/, http://h1/"
    );
}

#[test]
fn shard_params_parse_only_when_valid() {
    assert_eq!(parse_shard("1/3"), Some((1, 3)));
    assert_eq!(parse_shard(" 0 / 1 "), Some((0, 1)));
    assert_eq!(parse_shard("3/3"), None);
    assert_eq!(parse_shard("x/3"), None);
    assert_eq!(parse_shard("1"), None);
    assert_eq!(parse_shard("0/0"), None);
}

fn fire(route: RouteStrategy, addresses: &[&str], shards: usize) -> PreparedTrigger {
    let mut job = JobInfo::new(1, "j", "h");
    job.executor_route_strategy = route;
    PreparedTrigger {
        trigger: Trigger::new(1, TriggerType::Cron, 0),
        job: Arc::new(job),
        group: None,
        targets: Arc::new(Targets {
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            protocols: Vec::new(),
            registry_type: "Automatic registration",
            refused: Vec::new(),
            selector: None,
            cordoned: Vec::new(),
            left_out: Vec::new(),
        }),
        param: String::new(),
        trigger_time: 0,
        replaced: Vec::new(),
        shards: (0..shards)
            .map(|i| Shard {
                index: i as i32,
                total: shards as i32,
                log_id: i as i64,
                message_head: String::new(),
            })
            .collect(),
    }
}

#[test]
fn expected_calls_share_fires_among_their_executors() {
    let fires = [
        fire(RouteStrategy::First, &["http://a/"], 1),
        fire(RouteStrategy::First, &["http://a/"], 1),
        fire(
            RouteStrategy::Round,
            &["http://a/", "http://b/", "http://c/"],
            1,
        ),
        fire(RouteStrategy::Round, &["http://b/", "http://c/"], 1),
        fire(
            RouteStrategy::ShardingBroadcast,
            &["http://a/", "http://b/"],
            2,
        ),
        fire(RouteStrategy::Round, &[], 1),
    ];
    assert_eq!(
        expected_calls(fires.iter()),
        vec![
            ("http://a/".to_string(), 4), // 2 + 1/3 + 1 shard, rounded up
            ("http://b/".to_string(), 2), // 1/3 + 1/2 + 1 shard, rounded up
            ("http://c/".to_string(), 1),
        ]
    );
}
