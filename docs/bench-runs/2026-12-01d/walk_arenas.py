# Diagnostic used for BENCHMARKS.md (not part of the build): walks the chunks of every non-main glibc
# malloc arena of a live process (glibc 2.36, x86-64: a 64 MiB-aligned heap, heap_info then
# malloc_state, chunks from ~0x8a0 on) and prints, per heap, its pages present (from
# /proc/<pid>/pagemap, read before the memory), its in-use chunks, and how many pages hold in-use
# chunks. A chunk that glibc counts in use but that carries the process's tcache key at offset 8 is a
# freed block held in some thread's tcache (the key is guessed as the most common 8 bytes there; a
# live block with stale bytes can match, so "tcache-keyed" is an upper bound). Run as root, as
#   python3 walk_arenas.py <pid>
# walk_after_reap.sh runs it on `jobwheel executor` one second after its post-reap malloc_trim.
import sys,re,struct,collections
pid=int(sys.argv[1])
maps=[l.split() for l in open(f'/proc/{pid}/maps')]
pm=open(f'/proc/{pid}/pagemap','rb')
heaps=[]
for m in maps:
    lo,hi=[int(x,16) for x in m[0].split('-')]
    if len(m)>5 or m[1]!='rw-p' or lo%(64<<20)!=0: continue
    pm.seek((lo//4096)*8); raw=pm.read(((hi-lo)//4096)*8)
    res=[bool(struct.unpack('<Q',raw[i*8:i*8+8])[0]>>63) for i in range((hi-lo)//4096)]
    heaps.append((lo,hi,res))
mem=open(f'/proc/{pid}/mem','rb')
keyc=collections.Counter(); allch={}
for lo,hi,res in heaps:
    mem.seek(lo); data=mem.read(hi-lo)
    hsize=struct.unpack('<Q',data[16:24])[0]
    best=None
    for start in range(0x8a0,0x8e0,8):
        p=start; ok=True; n=0
        while p+16<=hsize:
            sz=struct.unpack('<Q',data[p+8:p+16])[0]&~7
            if sz<32 or p+sz>hsize: ok=False; break
            p+=sz; n+=1
        if ok and n>0: best=start; break
    if best is None: continue
    chunks=[]; p=best
    while p+16<=hsize:
        sz=struct.unpack('<Q',data[p+8:p+16])[0]&~7
        nxt=p+sz
        inuse = struct.unpack('<Q',data[nxt+8:nxt+16])[0]&1 if nxt+16<=hsize else 0
        chunks.append((p,sz,inuse)); p=nxt
    for o,sz,u in chunks:
        if u and sz>=32: keyc[data[o+24:o+32]]+=1
    allch[lo]=(hsize,res,chunks,data)
key=keyc.most_common(1)[0][0]
print('tcache key guess',key.hex(),keyc.most_common(1)[0][1])
for lo,(hsize,res,chunks,data) in allch.items():
    used=[c for c in chunks if c[2]]
    tc=[c for c in used if data[c[0]+24:c[0]+32]==key]
    pinned=set(); pinned_tc=set(); pinned_live=set()
    for o,sz,_ in used:
        pgs=range(o//4096,(o+sz-1)//4096+1)
        for pg in pgs:
            if res[pg]:
                pinned.add(pg)
                (pinned_tc if data[o+24:o+32]==key else pinned_live).add(pg)
    print(f'heap {hex(lo)} {hsize//1024} KiB, resident {sum(res[:hsize//4096])*4} KiB; in use {len(used)} chunks {sum(c[1] for c in used)//1024} KiB, of which tcache-keyed {len(tc)}; pages with in-use chunks {len(pinned)} (live-only {len(pinned_live-pinned_tc)}, tcache-only {len(pinned_tc-pinned_live)})')
    if hsize>4<<20:
        hi_used=[c for c in used if c[0]>0x40000 and data[c[0]+24:c[0]+32]!=key]
        print('  live chunks beyond 256 KiB:',len(hi_used),collections.Counter(c[1] for c in hi_used).most_common(12))
        seen=collections.Counter()
        for o,sz,_ in hi_used:
            seen[sz]+=1
            if seen[sz]<=2: print(f'   {sz} @{o:#x}:',data[o+16:o+16+min(sz-16,96)].hex())
