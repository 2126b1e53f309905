// RUN: cairn-opt %s -split-input-file -verify-diagnostics --cairn-fuse-elementwise
// RUN: not cairn-opt %s -split-input-file --cairn-fuse-elementwise=max-ops=1 2>&1 | FileCheck %s --check-prefix=LIMITS
// RUN: not cairn-opt %s -split-input-file --cairn-fuse-elementwise=max-inputs=0 2>&1 | FileCheck %s --check-prefix=LIMITS

// Tests that the pass needs a program: the tensor-level functions are
// cairn-lower-to-kernels' to turn into one.
// expected-error @+1 {{cairn-fuse-elementwise expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests the limits a chain may be given: at least one input, two ops.
// LIMITS: error: cairn-fuse-elementwise: max-inputs must be >= 1 and max-ops >= 2
cairn.program "M" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
  }
  cairn.step forward {
  }
}
