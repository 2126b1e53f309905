// RUN: cairn-opt %s -split-input-file -verify-diagnostics -cairn-group-updates

// Tests what cairn.update_group must satisfy: an i64 >= 2 on an optimizer
// update followed by that many minus one more updates of its settings.

cairn.program "Updates" attributes {batch = 4 : i64, optimizer = "", source = "updates.cairn", target = "cuda"} {
  %p = cairn.buffer param "p" : memref<8xf32>
  %q = cairn.buffer param "q" : memref<8xf32>
  cairn.step train_step {
    %grad.p = cairn.buffer grad "grad.p" : memref<8xf32>
    cairn.kernel.fill outs(%grad.p : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    %grad.q = cairn.buffer grad "grad.q" : memref<8xf32>
    cairn.kernel.fill outs(%grad.q : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    // expected-error @+1 {{expected 'cairn.update_group' = 2 on an optimizer update followed by 1 more with its settings, but kernel #1 of the group is not one}}
    cairn.kernel.sgd_update ins(%p, %grad.p, _, _ : memref<8xf32>, memref<8xf32>) outs(%p, _ : memref<8xf32>) {cairn.update_group = 2 : i64, dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    cairn.kernel.sgd_update ins(%q, %grad.q, _, _ : memref<8xf32>, memref<8xf32>) outs(%q, _ : memref<8xf32>) {dampening = 0.000000e+00 : f64, lr = 2.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  }
}

// -----

cairn.program "Updates" attributes {batch = 4 : i64, optimizer = "", source = "updates.cairn", target = "cuda"} {
  %p = cairn.buffer param "p" : memref<8xf32>
  cairn.step train_step {
    %grad.p = cairn.buffer grad "grad.p" : memref<8xf32>
    cairn.kernel.fill outs(%grad.p : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    // expected-error @+1 {{expected 'cairn.update_group' = 3 on an optimizer update followed by 2 more with its settings, but kernel #1 of the group is not one}}
    cairn.kernel.sgd_update ins(%p, %grad.p, _, _ : memref<8xf32>, memref<8xf32>) outs(%p, _ : memref<8xf32>) {cairn.update_group = 3 : i64, dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  }
}

// -----

cairn.program "Updates" attributes {batch = 4 : i64, optimizer = "", source = "updates.cairn", target = "cuda"} {
  %p = cairn.buffer param "p" : memref<8xf32>
  %out = cairn.buffer output "out" : memref<8xf32>
  cairn.step train_step {
    // expected-error @+1 {{expected 'cairn.update_group' on an optimizer update but found it on 'cairn.kernel.relu'}}
    cairn.kernel.relu ins(%p : memref<8xf32>) outs(%out : memref<8xf32>) {cairn.update_group = 2 : i64, n = 8 : i64}
  }
}

// -----

cairn.program "Updates" attributes {batch = 4 : i64, optimizer = "", source = "updates.cairn", target = "cuda"} {
  %p = cairn.buffer param "p" : memref<8xf32>
  cairn.step train_step {
    %grad.p = cairn.buffer grad "grad.p" : memref<8xf32>
    cairn.kernel.fill outs(%grad.p : memref<8xf32>) {n = 8 : i64, value = 1.000000e+00 : f64}
    // expected-error @+1 {{expected 'cairn.update_group' to be an i64 integer >= 2 but got 1 : i64}}
    cairn.kernel.sgd_update ins(%p, %grad.p, _, _ : memref<8xf32>, memref<8xf32>) outs(%p, _ : memref<8xf32>) {cairn.update_group = 1 : i64, dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 8 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  }
}

// -----

// Tests that the pass needs a program.
// expected-error @+1 {{cairn-group-updates expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
}
