//! CONSISTENT_HASH, bit-compatible with XXL-JOB's ring.

use super::*;

/// XXL-JOB's ring hash: MD5 of the UTF-8 key, bytes 0–3 read as a little-endian `u32`.
pub fn hash_key(key: &str) -> u32 {
    let digest = Md5::digest(key.as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// CONSISTENT_HASH, bit-compatible with XXL-JOB's `ExecutorRouteConsistentHash`.
///
/// Each address gets 100 virtual nodes `SHARD-{address}-NODE-{i}`; a later node with an equal
/// hash replaces the earlier one (Java `TreeMap.put`). The job's hash is that of its decimal id;
/// the first node at or after it wins, wrapping to the first node. `None` for no addresses.
pub fn consistent_hash(job_id: i32, addresses: &[String]) -> Option<&String> {
    let mut ring = BTreeMap::new();
    for address in addresses {
        for i in 0..VIRTUAL_NODE_NUM {
            ring.insert(hash_key(&format!("SHARD-{address}-NODE-{i}")), address);
        }
    }
    let job_hash = hash_key(&job_id.to_string());
    ring.range(job_hash..)
        .next()
        .or_else(|| ring.iter().next())
        .map(|(_, address)| *address)
}
