//! SHARDING_BROADCAST: every address, one shard each.

/// SHARDING_BROADCAST: every address with its shard index and the shard total.
pub fn broadcast_targets(addresses: &[String]) -> Vec<(String, i32, i32)> {
    let total = i32::try_from(addresses.len()).unwrap_or(i32::MAX);
    addresses
        .iter()
        .zip(0..total)
        .map(|(address, index)| (address.clone(), index, total))
        .collect()
}

/// The address of shard `index` (a broadcast retry); XXL-JOB falls back to the first address.
pub fn shard_address(addresses: &[String], index: i32) -> Option<&String> {
    usize::try_from(index)
        .ok()
        .and_then(|i| addresses.get(i))
        .or_else(|| addresses.first())
}
