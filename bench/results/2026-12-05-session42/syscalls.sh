#!/bin/bash
# usage: sysc.sh PEER PATH [CONNS] [WRKARGS]  -> syscalls per request during 4 s of a 7 s wrk run
P=/work/main/bench/peers/target/release/peer-$1
PORT=$((20000 + RANDOM % 20000))
BENCH_ADDR=127.0.0.1:$PORT taskset -c 0 $P > /tmp/peer.out 2>&1 &
PID=$!
sleep 0.5
C=${3:-16}
EV=raw_syscalls:sys_enter
for s in read write writev recvfrom sendto sendmsg recvmsg epoll_wait epoll_pwait epoll_pwait2 epoll_ctl futex sched_yield clock_gettime setsockopt accept4 close shutdown ioctl; do EV="$EV,syscalls:sys_enter_$s"; done
taskset -c 1 wrk -t1 -c$C -d7s $4 http://127.0.0.1:$PORT$2 > /tmp/wrk.out 2>&1 &
W=$!
sleep 2
perf stat -x, -e $EV,context-switches -p $PID -- sleep 4 2> /tmp/perf.out
wait $W
kill -TERM $PID; wait $PID 2>/dev/null
RPS=$(grep Requests/sec /tmp/wrk.out | awk '{print $2}')
python3 - "$RPS" "$1" "$2" <<'PY'
import sys
rps=float(sys.argv[1]); n=rps*4
out=[]
for l in open('/tmp/perf.out'):
    f=l.strip().split(',')
    if len(f)>3 and f[0].replace('.','').isdigit():
        v=float(f[0]); name=f[2].replace('syscalls:sys_enter_','')
        if v>0: out.append("%s=%.2f"%(name,v/n))
print("%-6s %-10s rps=%.0f  %s"%(sys.argv[2],sys.argv[3],rps,' '.join(out)))
PY
