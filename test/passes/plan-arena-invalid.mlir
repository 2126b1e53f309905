// RUN: cairn-opt %s -split-input-file -verify-diagnostics --cairn-plan-arena=time-limit=-1
// RUN: cairn-opt %s -split-input-file -verify-diagnostics --cairn-plan-arena=time-limit=nan

// Tests that the exact search's budget is not negative (nor NaN).
// expected-error @+1 {{cairn-plan-arena: time-limit must be a number of seconds >= 0 but got}}
cairn.program "M" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
  }
  cairn.step forward {
  }
}

// -----

// Tests that the pass needs a program (and says so before it looks at its
// options).
// expected-error @+1 {{cairn-plan-arena expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
  func.func @forward(%x: tensor<4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
