// RUN: cairn-opt %s -split-input-file -verify-diagnostics --cairn-extract-step=step=both

// Tests that the step to keep is train_step, forward or eval_loss (the pipeline's
// "both" means no extraction, not a step).
// expected-error @+1 {{cairn-extract-step: unknown step 'both'; expected train_step, forward or eval_loss}}
cairn.program "M" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
  }
  cairn.step forward {
  }
}

// -----

// Tests that the pass needs a program (and says so before it looks at the
// step).
// expected-error @+1 {{cairn-extract-step expected a cairn.program (cairn-lower-to-kernels makes it from @train_step and @forward)}}
module {
}
