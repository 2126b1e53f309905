// RUN: cairn-opt %s -split-input-file -verify-diagnostics --cairn-verify-arena

// Plans the verifier must reject, one per way a plan can be wrong that the
// IR's own verifiers let through, and the pass's own errors. Each message
// names the buffers, their bytes (unrounded) and their lifetimes in
// half-kernels: kernel k reads and writes during [2k, 2k + 1), a buffer is
// live from its first write to the end of its last touch, a persistent one
// for the whole run, an in-place output from half a kernel late.
//
// Not here, because the IR cannot hold them: a buffer past the arena, a
// misaligned offset or an in-place pair at two offsets or of two sizes
// (cairn.buffer's and cairn.program's verifiers reject those first); a view
// away from its root (a view has no offset of its own); a kernel naming a
// buffer of the other step (SSA scoping).

// Tests that two buffers one kernel touches cannot share bytes: the
// reduce_sum reads a (bytes [0, 1024)) while it writes s, moved to 512.
// expected-error @+1 {{internal error: the memory plan of model 'Overlap' failed verification: buffer 's' (bytes [512, 516), live [2, 5)) overlaps buffer 'a' (bytes [0, 1024), live [0, 3))}}
cairn.program "Overlap" attributes {arena_bytes = 1280 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "overlap.cairn", target = "cpu"} {
  %loss = cairn.buffer output "loss" at 1024 : memref<f32>
  cairn.step train_step {
    %a = cairn.buffer temp "a" at 0 : memref<256xf32>
    cairn.kernel.fill outs(%a : memref<256xf32>) {n = 256 : i64, value = 1.0 : f64}
    %s = cairn.buffer temp "s" at 512 : memref<f32>
    cairn.kernel.reduce_sum ins(%a : memref<256xf32>) outs(%s : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
    %c = cairn.buffer temp "c" at 0 : memref<128xf32>
    cairn.kernel.mul ins(%s, %s : memref<f32>, memref<f32>) outs(%c : memref<128xf32>) {lhs_strides = array<i64: 0>, n = 128 : i64, rhs_strides = array<i64: 0>}
    cairn.kernel.reduce_sum ins(%c : memref<128xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that an in-place buffer needs its input dead after the kernel that
// writes over it: the add reads c after the relu wrote d over it.
// expected-error @+1 {{internal error: the memory plan of model 'StillRead' failed verification: 'd' in place of 'c': the input is still live after the kernel that writes over it}}
cairn.program "StillRead" attributes {arena_bytes = 1024 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "stillread.cairn", target = "cpu"} {
  %out = cairn.buffer output "output" at 512 : memref<128xf32>
  cairn.step train_step {
    %c = cairn.buffer temp "c" at 0 : memref<128xf32>
    cairn.kernel.fill outs(%c : memref<128xf32>) {n = 128 : i64, value = 2.0 : f64}
    %d = cairn.buffer temp "d" at 0 in_place(%c : memref<128xf32>) : memref<128xf32>
    cairn.kernel.relu ins(%c : memref<128xf32>) outs(%d : memref<128xf32>) {n = 128 : i64}
    cairn.kernel.add ins(%d, %c : memref<128xf32>, memref<128xf32>) outs(%out : memref<128xf32>) {lhs_strides = array<i64: 1>, n = 128 : i64, rhs_strides = array<i64: 1>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that a view read later keeps its root alive: relu writes d over c,
// but the add reads c through c.view after it.
// expected-error @+1 {{internal error: the memory plan of model 'ViewRead' failed verification: 'd' in place of 'c': the input is still live after the kernel that writes over it}}
cairn.program "ViewRead" attributes {arena_bytes = 1024 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "viewread.cairn", target = "cpu"} {
  %out = cairn.buffer output "output" at 512 : memref<128xf32>
  cairn.step train_step {
    %c = cairn.buffer temp "c" at 0 : memref<2x64xf32>
    cairn.kernel.fill outs(%c : memref<2x64xf32>) {n = 128 : i64, value = 2.0 : f64}
    %cv = cairn.view temp "c.view" %c : memref<2x64xf32> to memref<128xf32>
    %d = cairn.buffer temp "d" at 0 in_place(%c : memref<2x64xf32>) : memref<128xf32>
    cairn.kernel.relu ins(%c : memref<2x64xf32>) outs(%d : memref<128xf32>) {n = 128 : i64}
    cairn.kernel.add ins(%d, %cv : memref<128xf32>, memref<128xf32>) outs(%out : memref<128xf32>) {lhs_strides = array<i64: 1>, n = 128 : i64, rhs_strides = array<i64: 1>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that only an element-wise kernel writes over its input: softmax
// reads other elements of a row after writing some.
// expected-error @+1 {{internal error: the memory plan of model 'Softmax' failed verification: 'p' in place of 'z': the kernel writing it is not an elementwise one reading that input}}
cairn.program "Softmax" attributes {arena_bytes = 512 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "softmax.cairn", target = "cpu"} {
  %loss = cairn.buffer output "loss" at 256 : memref<f32>
  cairn.step train_step {
    %z = cairn.buffer temp "z" at 0 : memref<4x16xf32>
    cairn.kernel.fill outs(%z : memref<4x16xf32>) {n = 64 : i64, value = 1.0 : f64}
    %p = cairn.buffer temp "p" at 0 in_place(%z : memref<4x16xf32>) : memref<4x16xf32>
    cairn.kernel.softmax ins(%z : memref<4x16xf32>) outs(%p : memref<4x16xf32>) {dim = 16 : i64, inner = 1 : i64, outer = 4 : i64}
    cairn.kernel.reduce_sum ins(%p : memref<4x16xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true, true>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that the element-wise kernel writing over its input reads that
// very buffer: reading it through a view is not what write-in-place
// decides.
// expected-error @+1 {{internal error: the memory plan of model 'ThroughView' failed verification: 'd' in place of 'c': the kernel writing it is not an elementwise one reading that input}}
cairn.program "ThroughView" attributes {arena_bytes = 512 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "throughview.cairn", target = "cpu"} {
  %loss = cairn.buffer output "loss" at 256 : memref<f32>
  cairn.step train_step {
    %c = cairn.buffer temp "c" at 0 : memref<2x32xf32>
    cairn.kernel.fill outs(%c : memref<2x32xf32>) {n = 64 : i64, value = 1.0 : f64}
    %cv = cairn.view temp "c.view" %c : memref<2x32xf32> to memref<64xf32>
    %d = cairn.buffer temp "d" at 0 in_place(%c : memref<2x32xf32>) : memref<64xf32>
    cairn.kernel.relu ins(%cv : memref<64xf32>) outs(%d : memref<64xf32>) {n = 64 : i64}
    cairn.kernel.reduce_sum ins(%d : memref<64xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that a kernel's workspace has bytes of its own while the kernel
// runs: here it overlaps the kernel's output.
// expected-error @+1 {{internal error: the memory plan of model 'Workspace' failed verification: buffer 'y' (bytes [0, 256), live [0, 3)) overlaps buffer 'ws' (bytes [0, 256), live [0, 1))}}
cairn.program "Workspace" attributes {arena_bytes = 1280 : i64, batch = 4 : i64, optimizer = "", plan_method = "greedy-by-size", source = "workspace.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" at 256 : memref<16x8xf32>
  %x = cairn.buffer input "x" at 768 : memref<4x8xf32>
  %out = cairn.buffer output "output" at 1024 : memref<4x16xf32>
  cairn.step train_step {
  }
  cairn.step forward {
    %ws = cairn.buffer workspace "ws" at 0 : memref<64xf32>
    %y = cairn.buffer activation "y" at 0 : memref<4x16xf32>
    cairn.kernel.linear ins(%x, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) workspace(%ws : memref<64xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
    cairn.kernel.relu ins(%y : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {n = 64 : i64}
  }
}

// -----

// Tests that persistent buffers never share bytes, even when no kernel
// touches them: they live for the whole run.
// expected-error @+1 {{internal error: the memory plan of model 'Persistent' failed verification: buffer 'b' (bytes [256, 320), live [0, 1)) overlaps buffer 'a' (bytes [0, 512), live [0, 1))}}
cairn.program "Persistent" attributes {arena_bytes = 512 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "persistent.cairn", target = "cpu"} {
  %a = cairn.buffer param "a" at 0 : memref<128xf32>
  %b = cairn.buffer buffer "b" at 256 : memref<16xf32>
  cairn.step train_step {
  }
  cairn.step forward {
  }
}

// -----

// Tests that a per-step buffer does not take a persistent buffer's bytes.
// expected-error @+1 {{internal error: the memory plan of model 'OverParam' failed verification: buffer 't' (bytes [0, 64), live [0, 3)) overlaps buffer 'w' (bytes [0, 64), live [0, 4))}}
cairn.program "OverParam" attributes {arena_bytes = 512 : i64, batch = 1 : i64, optimizer = "", plan_method = "greedy-by-size", source = "overparam.cairn", target = "cpu"} {
  %w = cairn.buffer param "w" at 0 : memref<16xf32>
  %loss = cairn.buffer output "loss" at 256 : memref<f32>
  cairn.step train_step {
    %t = cairn.buffer temp "t" at 0 : memref<16xf32>
    cairn.kernel.fill outs(%t : memref<16xf32>) {n = 16 : i64, value = 1.0 : f64}
    cairn.kernel.reduce_sum ins(%t : memref<16xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
  }
}

// -----

// Tests that the pass checks a planned program only.
// expected-error @+1 {{cairn-verify-arena expected a planned program (cairn-plan-arena gives it its arena)}}
cairn.program "Unplanned" attributes {batch = 1 : i64, optimizer = "", source = "unplanned.cairn", target = "cpu"} {
  cairn.step train_step {
  }
  cairn.step forward {
  }
}

// -----

// Tests that the pass needs a program.
// expected-error @+1 {{cairn-verify-arena expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
}

// -----

// Tests that a workspace's spare bytes count as its own: conv.workspace
// (46080 bytes at 18432) with 4096 spare reaches into 'live' at 65536,
// which the convolution's kernel outlives.
// expected-error @+1 {{internal error: the memory plan of model 'Spare' failed verification: buffer 'conv.workspace' (bytes [18432, 68608), live [2, 3)) overlaps buffer 'live' (bytes [65536, 65792), live [0, 5))}}
cairn.program "Spare" attributes {arena_bytes = 200704 : i64, batch = 2 : i64, optimizer = "", plan_method = "greedy-by-size", source = "spare.cairn", target = "cpu"} {
  %w = cairn.buffer param "conv.weight" at 0 : memref<16x16x3x3xf32>
  %x = cairn.buffer input "image" at 9216 : memref<2x16x6x6xf32>
  %y = cairn.buffer output "output" at 13824 : memref<2x16x6x6xf32>
  cairn.step forward {
    %t = cairn.buffer temp "live" at 65536 : memref<64xf32>
    cairn.kernel.fill outs(%t : memref<64xf32>) {n = 64 : i64, value = 0.0 : f64}
    %ws = cairn.buffer workspace "conv.workspace" at 18432 spare 4096 : memref<11520xf32>
    cairn.kernel.conv2d ins(%x, %w, _ : memref<2x16x6x6xf32>, memref<16x16x3x3xf32>) outs(%y : memref<2x16x6x6xf32>) workspace(%ws : memref<11520xf32>) {shape = array<i64: 2, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 6, 6>, workspace_elements = 11520 : i64}
    %u = cairn.buffer temp "after" at 66048 : memref<64xf32>
    cairn.kernel.relu ins(%t : memref<64xf32>) outs(%u : memref<64xf32>) {n = 64 : i64}
  }
}
