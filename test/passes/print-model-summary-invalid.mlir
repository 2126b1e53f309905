// RUN: cairn-opt %s --cairn-print-model-summary -verify-diagnostics -o /dev/null

// Tests that a module without @forward is rejected with a located error.
// expected-error @+1 {{expected a module with a @forward function}}
module {
  func.func @other() {
    return
  }
}
