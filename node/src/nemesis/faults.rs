//! The running cluster under the nemesis's hands: its node processes, their proxies, the client
//! processes and the lease service, and each fault action of the schedule carried out on them
//! and recorded in the run's history.
//!
//! A kill of a node in power-loss mode first cuts its power (`Frame::PowerCut`): the node holds
//! still and says how many unsynced ops the kill loses, recorded as the simulator's `DiskLost`
//! line; when the seed draws a tear (`schedule::draw_tear`), its last unsynced append is torn
//! inside an entry on the way out, so the restart finds a partial frame at the end of a segment
//! and the store's recovery must cut it.

use super::client_process::{ClientProcess, Finished, Role, ToClient};
use super::history::{Recorder, Stamped};
use super::proxy::Proxy;
use super::schedule::{self, Action};
use super::workload::{self, Lease, Stats};
use super::NemesisConfig;
use crate::addresses::Addresses;
use crate::client::ClusterClient;
use crate::frame::PowerCut;
use crate::process::NodeProcess;
use felix_core::api::ClientId;
use felix_core::history::Event;
use felix_core::record::NodeId;
use felix_sim::render::trace::SimEvent;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the power cuts of a run did (the summary).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cuts {
    /// Kills of a node in power-loss mode that cut its power first.
    pub cuts: u64,
    /// Of those, the ones that tore the node's last unsynced append.
    pub torn: u64,
    /// Unsynced ops the kills lost.
    pub ops_lost: u64,
}

/// The running cluster under the nemesis's hands.
pub struct Cluster {
    pub nodes: BTreeMap<NodeId, NodeProcess>,
    pub proxies: Vec<Proxy>,
    pub recorder: Recorder,
    pub unexpected_exits: Vec<(NodeId, i32)>,
    /// The nemesis's own connections to the nodes (failpoints, power cuts).
    pub control: ClusterClient,
    /// The felixd lease service, and the holders it hands the lease to.
    pub lease: Arc<Mutex<Lease>>,
    pub holders: u32,
    /// The paros fence service, when the workload is paros (lease moves move the fence).
    pub paros: Option<Arc<Mutex<workload::Paros>>>,
    /// The clients that are processes of their own (felixd holders and readers).
    pub clients: Vec<ClientProcess>,
    /// Each node's power-loss window in milliseconds (index `id - 1`; 0: not in the mode).
    pub power_loss: Vec<u32>,
    pub seed: u64,
    /// Kill actions carried out so far (what `schedule::draw_tear` counts).
    pub kills: usize,
    pub cuts: Cuts,
}

impl Cluster {
    /// The cluster just started, with the felixd lease granted to holder 0.
    pub fn new(
        config: &NemesisConfig,
        nodes: BTreeMap<NodeId, NodeProcess>,
        proxies: Vec<Proxy>,
        recorder: &Recorder,
        listen: &Addresses,
        power_loss: &[u32],
    ) -> Cluster {
        Cluster {
            nodes,
            proxies,
            recorder: recorder.clone(),
            unexpected_exits: Vec::new(),
            control: ClusterClient::new(listen.clone(), Duration::from_millis(300)),
            lease: Arc::new(Mutex::new(Lease {
                epoch: 1,
                holder: Some(0),
            })),
            holders: config.holders,
            paros: None,
            clients: Vec::new(),
            power_loss: power_loss.to_vec(),
            seed: config.seed,
            kills: 0,
            cuts: Cuts::default(),
        }
    }

    fn links_of(&self, node: NodeId) -> impl Iterator<Item = &Proxy> {
        self.proxies
            .iter()
            .filter(move |proxy| proxy.from == node || proxy.to == node)
    }

    fn note(&self, description: String) {
        self.recorder.sim(SimEvent::NetworkFault { description });
    }

    /// Notices nodes that exited on their own.
    pub fn reap(&mut self) {
        for (id, node) in self.nodes.iter_mut() {
            if let Some(code) = node.exited() {
                self.unexpected_exits.push((*id, code));
                self.recorder.history(Event::Crashed { node: *id });
                self.recorder.sim(SimEvent::NetworkFault {
                    description: format!("n{id} exited on its own with code {code}"),
                });
            }
        }
    }

    pub fn apply(&mut self, action: &Action) {
        let cut = |proxy: &Proxy| proxy.faults.cut.store(true, Ordering::SeqCst);
        match action {
            Action::Kill(ids) => self.kill(ids),
            Action::Restart(ids) => {
                for id in ids {
                    self.restart(*id);
                }
            }
            Action::Pause(id) => {
                if let Some(node) = self.nodes.get_mut(id) {
                    if node.is_up() && !node.is_paused() {
                        node.pause();
                        self.note(action.describe());
                    }
                }
            }
            Action::Resume(id) => {
                if let Some(node) = self.nodes.get_mut(id) {
                    if node.is_paused() {
                        node.resume();
                        self.note(action.describe());
                    }
                }
            }
            Action::Isolate(id) => {
                self.links_of(*id).for_each(cut);
                self.note(action.describe());
            }
            Action::CutOneWay { from, to } => {
                self.proxies
                    .iter()
                    .filter(|proxy| proxy.from == *from && proxy.to == *to)
                    .for_each(cut);
                self.note(action.describe());
            }
            Action::Lossy {
                node,
                drop_per_million,
            } => {
                for proxy in self.links_of(*node) {
                    let share = &proxy.faults.drop_per_million;
                    share.store(*drop_per_million, Ordering::SeqCst);
                }
                self.note(action.describe());
            }
            Action::Slow { node, delay_millis } => {
                for proxy in self.links_of(*node) {
                    let delay = &proxy.faults.delay_millis;
                    delay.store(*delay_millis, Ordering::SeqCst);
                }
                self.note(action.describe());
            }
            Action::HealLinks(id) => {
                self.links_of(*id).for_each(|proxy| proxy.faults.heal());
                self.note(action.describe());
            }
            Action::HealLink { from, to } => {
                self.proxies
                    .iter()
                    .filter(|proxy| proxy.from == *from && proxy.to == *to)
                    .for_each(|proxy| proxy.faults.heal());
                self.note(action.describe());
            }
            Action::SlowDisk {
                node,
                sync_delay_millis,
            } => self.failpoint(*node, *sync_delay_millis, action),
            Action::HealDisk(node) => self.failpoint(*node, 0, action),
            Action::MoveLease => self.move_lease(),
            Action::PauseClient {
                client,
                lease_expires,
            } => self.pause_client(*client, *lease_expires),
            Action::ResumeClient(client) => self.resume_client(*client),
        }
    }

    /// SIGKILL of the nodes that are up, at one instant; a node in power-loss mode (and not
    /// frozen, so it can answer) has its power cut first, torn or not as the seed says.
    fn kill(&mut self, ids: &[NodeId]) {
        let kill = self.kills;
        self.kills += 1;
        let up: Vec<NodeId> = ids
            .iter()
            .copied()
            .filter(|id| self.nodes.get(id).is_some_and(NodeProcess::is_up))
            .collect();
        if up.is_empty() {
            return;
        }
        self.note(Action::Kill(up.clone()).describe());
        let mut asked = Vec::new();
        for &id in &up {
            let window = self.power_loss.get(id as usize - 1).copied().unwrap_or(0);
            let frozen = self.nodes.get(&id).is_some_and(NodeProcess::is_paused);
            if window > 0 && !frozen {
                asked.push((id, schedule::draw_tear(self.seed, kill, id)));
            }
        }
        // Every cut at once, so the nodes hold still at the same moment, as they die together.
        let cuts: Vec<PowerCut> = self
            .control
            .power_cuts(&asked)
            .into_iter()
            .filter_map(Result::ok)
            .collect();
        for (id, _) in asked {
            self.control.disconnect(id);
        }
        for id in &up {
            if let Some(node) = self.nodes.get_mut(id) {
                node.kill();
            }
        }
        for &id in &up {
            self.recorder.history(Event::Crashed { node: id });
        }
        for cut in cuts {
            self.cuts.cuts += 1;
            self.cuts.torn += u64::from(cut.torn.is_some());
            self.cuts.ops_lost += cut.ops_lost;
            self.recorder.sim(SimEvent::DiskLost {
                node: cut.node,
                ops_lost: cut.ops_lost,
                torn: cut.torn.is_some(),
            });
        }
    }

    /// The lease service moves the lease (or, for paros, the writer fence) to the other
    /// holder without telling the one that had it; holder processes hear the new state on
    /// their input (a frozen one when it thaws).
    fn move_lease(&mut self) {
        if let Some(paros) = &self.paros {
            let mut paros = match paros.lock() {
                Ok(paros) => paros,
                Err(poisoned) => poisoned.into_inner(),
            };
            let from = paros.owner;
            let to = from.map_or(0, |from| (from + 1) % self.holders.max(1));
            paros.token_last += 1;
            paros.owner = Some(to);
            self.recorder.sim(SimEvent::LeaseMoved {
                from,
                to,
                epoch: paros.token_last,
                told: false,
            });
            return;
        }
        let (epoch, holder) = {
            let mut lease = match self.lease.lock() {
                Ok(lease) => lease,
                Err(poisoned) => poisoned.into_inner(),
            };
            let from = lease.holder;
            let to = from.map_or(0, |from| (from + 1) % self.holders.max(1));
            lease.epoch += 1;
            lease.holder = Some(to);
            self.recorder.sim(SimEvent::LeaseMoved {
                from,
                to,
                epoch: lease.epoch,
                told: false,
            });
            (lease.epoch, lease.holder)
        };
        self.tell_lease(epoch, holder);
    }

    /// Tells every holder process the lease service's state.
    pub fn tell_lease(&mut self, epoch: u64, holder: Option<ClientId>) {
        for process in &mut self.clients {
            if process.spec.role == Role::Holder {
                process.tell(&ToClient::Lease { epoch, holder });
            }
        }
    }

    fn lease_holder(&self) -> Option<ClientId> {
        match self.lease.lock() {
            Ok(lease) => lease.holder,
            Err(poisoned) => poisoned.into_inner().holder,
        }
    }

    /// SIGSTOP of a client process (recorded once it froze); a lease it holds may expire.
    fn pause_client(&mut self, client: ClientId, lease_expires: bool) {
        let Some(process) = self.clients.iter_mut().find(|p| p.client() == client) else {
            return;
        };
        if process.is_paused() || !process.pause() {
            return;
        }
        self.recorder.sim(SimEvent::Paused { client });
        if lease_expires && self.paros.is_none() && self.lease_holder() == Some(client) {
            self.move_lease();
        }
    }

    /// SIGCONT of a client process (recorded before it thaws).
    fn resume_client(&mut self, client: ClientId) {
        let recorder = self.recorder.clone();
        if let Some(process) = self.clients.iter_mut().find(|p| p.client() == client) {
            if process.is_paused() {
                recorder.sim(SimEvent::Resumed { client });
                process.resume();
            }
        }
    }

    /// Sets a node's slow-disk failpoint (nothing if it is down or does not answer: a
    /// restarted node starts with a healthy disk).
    fn failpoint(&mut self, node: NodeId, sync_delay_millis: u32, action: &Action) {
        let up = self
            .nodes
            .get(&node)
            .is_some_and(|process| process.is_up() && !process.is_paused());
        if up && self.control.failpoint(node, sync_delay_millis).is_ok() {
            self.note(action.describe());
        }
    }

    fn restart(&mut self, id: NodeId) {
        let Some(node) = self.nodes.get_mut(&id) else {
            return;
        };
        if node.is_up() {
            return;
        }
        self.recorder.history(Event::Restarted { node: id });
        self.recorder.sim(SimEvent::NetworkFault {
            description: format!("restart n{id}"),
        });
        if let Err(error) = node.restart() {
            self.recorder.sim(SimEvent::NetworkFault {
                description: format!("n{id} could not be restarted: {error}"),
            });
        }
    }

    /// Every fault off: links healed, paused nodes and clients resumed, killed nodes restarted.
    pub fn heal(&mut self) {
        for proxy in &self.proxies {
            proxy.faults.heal();
        }
        let ids: Vec<NodeId> = self.nodes.keys().copied().collect();
        for id in ids {
            if let Some(node) = self.nodes.get_mut(&id) {
                if node.is_paused() {
                    node.resume();
                }
            }
            self.restart(id);
            // A node that stayed up may still have a slow disk.
            let _ = self.control.failpoint(id, 0);
        }
        let clients: Vec<ClientId> = self.clients.iter().map(ClientProcess::client).collect();
        for client in clients {
            self.resume_client(client);
        }
        self.recorder.sim(SimEvent::Healed);
    }

    /// Tells every client process to stop writing.
    pub fn quiesce_clients(&mut self) {
        for process in &mut self.clients {
            process.tell(&ToClient::Quiesce);
        }
    }

    /// Stops every client process: their records (one source each), their counters added to
    /// `stats`, and a sentence for each that did not end cleanly.
    pub fn finish_clients(&mut self, stats: &Stats) -> (Vec<Vec<Stamped>>, usize, Vec<String>) {
        let mut sources = Vec::new();
        let mut skipped = 0;
        let mut failures = Vec::new();
        for process in &mut self.clients {
            let Finished {
                lines,
                counts,
                skipped: torn,
                failure,
            } = process.finish(Duration::from_secs(5));
            if let Some(counts) = counts {
                stats.add(&counts);
            }
            if let Some(failure) = failure {
                failures.push(format!("client c{}: {failure}", process.client()));
            }
            skipped += torn;
            sources.push(lines);
        }
        (sources, skipped, failures)
    }
}
