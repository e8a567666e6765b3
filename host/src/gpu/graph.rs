//! Replaying a fixed sequence of launches from a CUDA graph: the sequence is captured once
//! (per key: the buffers it was queued with) and replayed on the GPU's stream, which saves
//! the per-launch overhead of many small launches (a level or a color each).

use std::sync::Arc;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaStream};

use super::Gpu;
use crate::error::{Error, Result};

/// A captured sequence and the key it was captured for; replayed only for the same key.
pub struct GraphReplay<K> {
    capture_stream: Option<Arc<CudaStream>>,
    captured: Option<(K, CudaGraph)>,
}

impl<K> Default for GraphReplay<K> {
    fn default() -> Self {
        GraphReplay { capture_stream: None, captured: None }
    }
}

impl<K: PartialEq> GraphReplay<K> {
    /// Replays the graph captured for `key`, first capturing `queue` (which queues its launches
    /// on the stream it is given) when there is none for this key. The key must name every
    /// buffer the launches use that may change between calls (their addresses are baked in).
    pub fn run(
        &mut self,
        gpu: &Gpu,
        key: K,
        queue: impl FnOnce(&Arc<CudaStream>) -> Result<()>,
    ) -> Result<()> {
        if self.captured.as_ref().is_none_or(|(k, _)| *k != key) {
            self.captured = None; // frees the old graph before capturing a new one
            let stream = match &self.capture_stream {
                Some(s) => s.clone(),
                None => gpu.stream().fork().map_err(Error::driver("stream creation"))?,
            };
            self.capture_stream = Some(stream.clone());
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            stream.begin_capture(mode).map_err(Error::driver("stream capture"))?;
            let queued = queue(&stream);
            let graph =
                stream.end_capture(CUgraphInstantiate_flags(0)).map_err(Error::driver("stream capture"));
            queued?;
            let graph = graph?.ok_or_else(|| Error::Library {
                library: "CUDA",
                what: "stream capture",
                message: "the capture produced no graph".into(),
            })?;
            self.captured = Some((key, graph));
        }
        let (_, graph) = self.captured.as_ref().expect("captured above");
        // Replayed on the GPU's own stream, so it runs in order with everything else.
        gpu.context().bind_to_thread().map_err(Error::driver("context binding"))?;
        // SAFETY: a graph instantiated in this context; the buffers it uses are those of the
        // key (checked above), which the caller keeps alive while it runs.
        unsafe { cudarc::driver::result::graph::launch(graph.cu_graph_exec(), gpu.stream().cu_stream()) }
            .map_err(Error::driver("graph launch"))
    }
}
