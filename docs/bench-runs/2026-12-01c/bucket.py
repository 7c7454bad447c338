# perf script lines -> CPU samples per thread-name and offset window in the second, top symbols in the burst
import sys, re, collections
burst_ms = int(sys.argv[1]) if len(sys.argv) > 1 else 200
by_win = collections.Counter(); by_comm_burst = collections.Counter(); by_comm_rest = collections.Counter()
sym_burst = collections.Counter(); total = 0
for line in sys.stdin:
    # format: comm tid time: sym
    m = re.match(r'\s*(.+?)\s+(\d+)\s+(\d+)\.(\d+):\s+\S+\s+(.*)$', line)
    if not m: continue
    comm, tid, sec, frac, rest = m.groups()
    ms = int(frac[:3].ljust(3,'0'))
    win = ms // 50 * 50
    by_win[win] += 1; total += 1
    sym = rest.strip().split(' ',1)[-1] if rest else '?'
    sym = re.sub(r'\+0x[0-9a-f]+', '', sym)
    if ms < burst_ms:
        by_comm_burst[comm] += 1; sym_burst[(comm[:12], sym[:90])] += 1
    else:
        by_comm_rest[comm] += 1
print('samples', total)
print('by 50 ms window of the second:', ' '.join(f'{w}:{by_win[w]}' for w in sorted(by_win)))
print('burst (first %d ms) by thread:' % burst_ms, by_comm_burst.most_common(12))
print('rest by thread:', by_comm_rest.most_common(12))
print('top symbols in the burst:')
for (c,s),n in sym_burst.most_common(45): print(f'{n:6d} {c:12s} {s}')
