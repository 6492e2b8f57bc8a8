//! A trial of each workload: fresh servers, their answers checked, the
//! load, and what it cost in CPU.

use std::{
    net::SocketAddr,
    ops::Range,
    path::Path,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{Context, Result};
use tokio::{runtime::Runtime, sync::watch};

use crate::{
    process::{OwnCpu, ServerProcess},
    wrk::{self, LoadResult},
    ws::{close_all, open, SMALL_READS},
};

use super::sockets::{
    broadcast_to, check_channels, check_json, hold, latency, open_joined, open_stalled, probe,
    read_stalled,
};
use super::trials::{FanoutTrial, HeldTrial, SlowTrial};
use super::{Options, FAN_TOPIC, IDLE_TOPIC, SLOW_PAD};

pub(super) struct Lab<'a> {
    pub(super) rt: &'a Runtime,
    pub(super) opts: &'a Options,
    /// `slow`'s bursts measured.
    pub(super) bursts: usize,
    pub(super) script: &'a Path,
    pub(super) max_connections: String,
}

impl Lab<'_> {
    /// A server with `env` (and the connection limit), its answers checked.
    pub(super) fn start(&self, env: &[(&str, &str)]) -> Result<ServerProcess> {
        let mut all = vec![("TERN_MAX_CONNECTIONS", self.max_connections.as_str())];
        all.extend_from_slice(env);
        let process = ServerProcess::start_with(
            &self.opts.binary,
            &[],
            &self.opts.server_cores,
            "TERN_ADDR",
            &all,
        )?;
        check_json(process.addr).context("GET /json answered wrongly")?;
        self.rt
            .block_on(check_channels(process.addr))
            .context("/socket answered wrongly")?;
        Ok(process)
    }

    pub(super) fn wrk(&self, addr: SocketAddr, seconds: f64) -> Result<LoadResult> {
        let (script, cores) = (self.script.to_owned(), self.opts.load_cores.clone());
        let connections = self.opts.connections;
        // wrk runs on a blocking thread: the held sockets' tasks keep
        // being served (pings answered) meanwhile.
        self.rt.block_on(async move {
            tokio::task::spawn_blocking(move || {
                wrk::run_wrk(&script, addr, &cores, connections, seconds)
            })
            .await
            .context("wrk's thread panicked")?
        })
    }

    pub(super) fn held(&self, n: usize, round: usize) -> Result<HeldTrial> {
        let process = self.start(&[])?;
        let addr = process.addr;
        if self.opts.warmup_s > 0.0 {
            self.wrk(addr, self.opts.warmup_s)?;
        }
        std::thread::sleep(Duration::from_millis(500));
        let before = process.usage()?.rss_kib;
        let started = Instant::now();
        let sockets = self.rt.block_on(open_joined(addr, n, IDLE_TOPIC))?;
        let open_s = started.elapsed().as_secs_f64();
        let (stop, stopped) = watch::channel(false);
        let holders: Vec<_> = {
            let _in = self.rt.enter();
            sockets
                .into_iter()
                .map(|ws| tokio::spawn(hold(ws, stopped.clone())))
                .collect()
        };
        // Time for the memory to settle; the holders are polled meanwhile.
        self.rt
            .block_on(async { tokio::time::sleep(Duration::from_millis(500)).await });
        let after = process.usage()?.rss_kib;
        let cpu_before = process.usage()?;
        let load = self.wrk(addr, self.opts.seconds)?;
        let cpu_after = process.usage()?;
        let _ = stop.send(true);
        let mut open = Vec::with_capacity(n);
        let (mut unexpected, mut ended) = (0, 0);
        for h in holders {
            let (ws, extra, gone) = self.rt.block_on(h).context("a client task panicked")?;
            unexpected += extra;
            if gone {
                ended += 1;
            } else {
                open.push(ws);
            }
        }
        let unclean_closes = self.rt.block_on(close_all(open));
        process.stop()?;
        let seconds = load.duration_us as f64 / 1e6;
        let cpu = cpu_after.cpu_s_since(&cpu_before);
        Ok(HeldTrial {
            round,
            held: n,
            open_s,
            rss_before_kib: before,
            rss_after_kib: after,
            kib_per_socket: (n > 0).then(|| after.saturating_sub(before) as f64 / n as f64),
            rps: load.rps(),
            ratio_to_none: None,
            server_busy: if seconds > 0.0 { cpu / seconds } else { 0.0 },
            load,
            unexpected_messages: unexpected,
            ended,
            unclean_closes,
        })
    }

    pub(super) fn fanout(&self, workload: &str, n: usize, round: usize) -> Result<FanoutTrial> {
        let channel = format!(
            "tern-bench-{}-{}-{round}-{n}-{}",
            std::process::id(),
            workload,
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_micros())
        );
        let backend = match workload {
            "fanout-redis" => Some(("redis", self.opts.redis_url.as_str())),
            "fanout-nats" => Some(("nats", self.opts.nats_url.as_str())),
            _ => None,
        };
        let mut servers = Vec::new();
        match backend {
            Some((name, url)) => {
                let env = [
                    ("REALTIME_BACKEND", name),
                    ("REALTIME_URL", url),
                    ("REALTIME_CHANNEL", channel.as_str()),
                ];
                servers.push(self.start(&env)?);
                servers.push(self.start(&env)?);
            }
            None => servers.push(self.start(&[])?),
        }
        let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
        let opts = self.opts;
        let measured = opts.warm..opts.warm + opts.broadcasts;
        let total = measured.end;
        // Subscribers [0, first) on the publisher's server, the rest on
        // the other one.
        let first = if addrs.len() > 1 { n / 2 } else { n };
        let (result, probe_ms, unclean_closes, cpu) = self.rt.block_on(async {
            let mut sockets = open_joined(addrs[0], first, FAN_TOPIC).await?;
            if let Some(other) = addrs.get(1) {
                sockets.extend(open_joined(*other, n - first, FAN_TOPIC).await?);
            }
            let mut publisher = open(addrs[0], "/socket", SMALL_READS).await?;
            let probe_ms = match addrs.get(1) {
                Some(other) => Some(probe(&mut publisher, *other).await?),
                None => None,
            };
            let cpu = CpuClock::start(&servers)?;
            let mut result =
                broadcast_to(sockets, &mut publisher, total, 1, 0, opts.interval).await?;
            let cpu = cpu.stop(&servers)?;
            let unclean = close_all(std::mem::take(&mut result.sockets)).await
                + close_all(vec![publisher]).await;
            Ok::<_, anyhow::Error>((result, probe_ms, unclean, cpu))
        })?;
        for s in servers {
            s.stop()?;
        }
        let lats: Vec<&[u32]> = result.latencies.iter().map(Vec::as_slice).collect();
        let seqs: Vec<Range<usize>> = measured.map(|s| s..s + 1).collect();
        let groups = if addrs.len() > 1 {
            vec![
                (
                    "publisher's server".to_owned(),
                    latency(&lats[..first], &seqs),
                ),
                ("other server".to_owned(), latency(&lats[first..], &seqs)),
            ]
        } else {
            vec![("all".to_owned(), latency(&lats, &seqs))]
        };
        Ok(FanoutTrial {
            round,
            workload: workload.to_owned(),
            subscribers: n,
            broadcasts: opts.broadcasts,
            groups,
            client_busy: cpu.client_busy,
            server_busy: cpu.server_busy,
            server_cpu_us_per_delivery: cpu.server_cpu_s * 1e6 / (n * total).max(1) as f64,
            probe_ms,
            unexpected_messages: result.unexpected,
            unclean_closes,
        })
    }

    pub(super) fn slow(&self, variant: &str, round: usize) -> Result<SlowTrial> {
        let policy = if variant == "stalled-drop" {
            "drop"
        } else {
            "close"
        };
        let server = self.start(&[("REALTIME_SLOW_CONSUMER", policy)])?;
        let addr = server.addr;
        let opts = self.opts;
        let burst = opts.burst.max(1);
        let total = (opts.warm + self.bursts) * burst;
        let servers = [server];
        let (result, stalled, unclean_closes, cpu) = self.rt.block_on(async {
            let sockets = open_joined(addr, opts.slow_subscribers, FAN_TOPIC).await?;
            let mut stalled = match variant {
                "none" => None,
                _ => Some(open_stalled(addr, FAN_TOPIC).await?),
            };
            let mut publisher = open(addr, "/socket", SMALL_READS).await?;
            let cpu = CpuClock::start(&servers)?;
            let pad = SLOW_PAD;
            let mut result =
                broadcast_to(sockets, &mut publisher, total, burst, pad, opts.interval).await?;
            let cpu = cpu.stop(&servers)?;
            let stalled = match stalled.take() {
                Some(ws) => Some(read_stalled(ws, total as u64).await),
                None => None,
            };
            let unclean = close_all(std::mem::take(&mut result.sockets)).await
                + close_all(vec![publisher]).await;
            Ok::<_, anyhow::Error>((result, stalled, unclean, cpu))
        })?;
        let [server] = servers;
        server.stop()?;
        let lats: Vec<&[u32]> = result.latencies.iter().map(Vec::as_slice).collect();
        let bursts: Vec<Range<usize>> = (opts.warm..opts.warm + self.bursts)
            .map(|b| b * burst..(b + 1) * burst)
            .collect();
        let after: Vec<Range<usize>> = match &stalled {
            Some(s) => bursts
                .iter()
                .filter(|b| b.start as u64 >= s.received)
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        Ok(SlowTrial {
            round,
            variant: variant.to_owned(),
            latency: latency(&lats, &bursts),
            latency_after: (!after.is_empty()).then(|| latency(&lats, &after)),
            stalled,
            client_busy: cpu.client_busy,
            server_busy: cpu.server_busy,
            server_cpu_us_per_delivery: cpu.server_cpu_s * 1e6
                / (opts.slow_subscribers * total).max(1) as f64,
            unexpected_messages: result.unexpected,
            unclean_closes,
        })
    }
}

/// CPU of the client and the servers over a stretch of wall time.
pub(super) struct CpuClock {
    pub(super) own: OwnCpu,
    pub(super) client: f64,
    pub(super) servers: f64,
    pub(super) started: Instant,
}

pub(super) struct Busy {
    pub(super) client_busy: f64,
    pub(super) server_busy: f64,
    pub(super) server_cpu_s: f64,
}

pub(super) fn servers_cpu(servers: &[ServerProcess]) -> Result<f64> {
    let mut sum = 0.0;
    for s in servers {
        let u = s.usage()?;
        sum += u.user_s + u.system_s;
    }
    Ok(sum)
}

impl CpuClock {
    pub(super) fn start(servers: &[ServerProcess]) -> Result<CpuClock> {
        let own = OwnCpu::new();
        Ok(CpuClock {
            client: own.seconds()?,
            own,
            servers: servers_cpu(servers)?,
            started: Instant::now(),
        })
    }

    pub(super) fn stop(self, servers: &[ServerProcess]) -> Result<Busy> {
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let server_cpu_s = servers_cpu(servers)? - self.servers;
        Ok(Busy {
            client_busy: (self.own.seconds()? - self.client) / wall,
            server_busy: server_cpu_s / wall,
            server_cpu_s,
        })
    }
}
