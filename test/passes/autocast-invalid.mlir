// RUN: not cairn-opt %s --cairn-autocast=precision=f8 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: cairn-opt %s -verify-diagnostics --cairn-autocast=precision=f16

// Tests that an unknown precision is an error, not float32.
// UNKNOWN: error: cairn-autocast: unknown precision 'f8'; expected f16, bf16 or f32

// Tests that the pass runs before autodiff only: a @train_step typed
// without it would differ from its forward.
// expected-error @+1 {{cairn-autocast runs before cairn-autodiff: @train_step exists already}}
module {
  func.func @train_step() {
    return
  }
}
