//===- CliTest.cpp - Command-line parsing of generated executables --------===//
#include "runtime/Cli.h"

#include <gtest/gtest.h>

using namespace cairn::runtime;

namespace {

absl::StatusOr<Options> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "model");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return parseCommandLine(static_cast<int>(argv.size()), argv.data());
}

void expectUsageError(std::vector<std::string> args, const std::string &fragment) {
  absl::StatusOr<Options> options = parse(args);
  ASSERT_FALSE(options.ok()) << args[0];
  EXPECT_NE(options.status().message().find(fragment), std::string::npos)
      << options.status().message();
}

TEST(Cli, Defaults) {
  absl::StatusOr<Options> options = parse({"train"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->command, Command::Train);
  EXPECT_EQ(options->data, "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(options->epochs, 1);
  EXPECT_FALSE(options->steps);
  EXPECT_EQ(options->seed, 0u);
  EXPECT_EQ(options->threads, 0);
  EXPECT_EQ(options->logEvery, 100);
  EXPECT_EQ(options->normalization.mean, 0.0f);
  EXPECT_EQ(options->normalization.std, 1.0f);
}

TEST(Cli, EveryTrainFlagBothSpellings) {
  absl::StatusOr<Options> options =
      parse({"train", "--data", "d", "--steps=7", "--seed", "18446744073709551615", "--load=l",
             "--save", "s", "--metrics", "m", "--normalize=0.25,0.5", "--threads", "3",
             "--log-every", "9"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->data, "d");
  EXPECT_EQ(options->steps, 7);
  EXPECT_EQ(options->seed, 18446744073709551615ull);
  EXPECT_EQ(options->load, "l");
  EXPECT_EQ(options->save, "s");
  EXPECT_EQ(options->metrics, "m");
  EXPECT_EQ(options->normalization.mean, 0.25f);
  EXPECT_EQ(options->normalization.std, 0.5f);
  EXPECT_EQ(options->threads, 3);
  EXPECT_EQ(options->logEvery, 9);
}

TEST(Cli, OtherCommands) {
  absl::StatusOr<Options> step =
      parse({"step", "--load", "w", "--batch", "b", "--out", "o", "--seed", "4"});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->command, Command::Step);
  EXPECT_EQ(step->batch, "b");
  EXPECT_EQ(step->out, "o");
  EXPECT_EQ(parse({"eval", "--load", "w"})->command, Command::Eval);
  absl::StatusOr<Options> predict = parse(
      {"predict", "--load", "w", "--input", "x=a.npy,y=b.npy", "--out=y.npy", "--threads", "1"});
  ASSERT_TRUE(predict.ok()) << predict.status();
  EXPECT_EQ(predict->command, Command::Predict);
  EXPECT_EQ(predict->input, "x=a.npy,y=b.npy");
  EXPECT_EQ(predict->out, "y.npy");
  EXPECT_EQ(parse({"init", "--save", "w"})->command, Command::Init);
  EXPECT_EQ(parse({"--help"})->command, Command::Help);
  EXPECT_EQ(parse({"-h"})->command, Command::Help);
  // Help wins over whatever else is on the line.
  EXPECT_EQ(parse({"train", "--bogus", "-h"})->command, Command::Help);
  EXPECT_EQ(parse({"--version"})->command, Command::Version);
}

TEST(Cli, UsageErrors) {
  expectUsageError({}, "no command");
  expectUsageError({"fit"}, "unknown command 'fit'");
  expectUsageError({"train", "--bogus", "1"}, "train: unknown flag '--bogus'");
  expectUsageError({"eval", "--load", "w", "--epochs", "2"}, "eval: unknown flag '--epochs'");
  expectUsageError({"train", "--epochs"}, "--epochs needs a value");
  expectUsageError({"train", "--save", "--metrics", "m"}, "--save needs a value");
  expectUsageError({"train", "--epochs", "2x"}, "--epochs expects an integer of at least 1");
  expectUsageError({"train", "--epochs", "0"}, "at least 1");
  expectUsageError({"train", "--steps", "-3"}, "--steps expects");
  expectUsageError({"train", "--seed", "-1"}, "--seed expects");
  expectUsageError({"train", "--threads", "99999"}, "more than 4096");
  expectUsageError({"train", "--normalize", "0.5"}, "MEAN,STD");
  expectUsageError({"train", "--normalize", "0.5,0"}, "MEAN,STD");
  expectUsageError({"train", "--epochs", "2", "--steps", "3"}, "exclude each other");
  expectUsageError({"train", "--seed", "1", "--seed", "2"}, "--seed is given twice");
  expectUsageError({"train", "extra"}, "unexpected argument 'extra'");
  expectUsageError({"train", "--data="}, "--data needs a non-empty value");
  expectUsageError({"eval"}, "eval: --load is required");
  expectUsageError({"init"}, "init: --save is required");
  expectUsageError({"step", "--load", "w", "--batch", "b"}, "step: --out is required");
  expectUsageError({"predict", "--load", "w", "--out", "o"}, "predict: --input is required");
  expectUsageError({"predict", "--input", "x", "--out", "o"}, "predict: --load is required");
  expectUsageError({"predict", "--load", "w", "--input", "x", "--out", "o", "--epochs", "2"},
                   "predict: unknown flag '--epochs'");
  expectUsageError({"train", "--input", "x"}, "train: unknown flag '--input'");
}

TEST(Cli, PoisonIsAFlagWithoutAValue) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"train", "--poison", "--steps", "3"},
        {"eval", "--load", "w", "--poison"},
        {"step", "--poison", "--load", "w", "--batch", "b", "--out", "o"}}) {
    absl::StatusOr<Options> options = parse(args);
    ASSERT_TRUE(options.ok()) << args[0] << ": " << options.status();
    EXPECT_TRUE(options->poison) << args[0];
  }
  absl::StatusOr<Options> plain = parse({"train"});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->poison);
  expectUsageError({"train", "--poison=1"}, "train: --poison takes no value");
  expectUsageError({"train", "--poison", "--poison"}, "--poison is given twice");
  expectUsageError({"init", "--save", "w", "--poison"}, "init: unknown flag '--poison'");
}

TEST(Cli, HelpNamesEveryCommandAndFlag) {
  ProgramSpec spec;
  spec.model = "MLP";
  spec.sourceFile = "mlp.cairn";
  spec.batch = 64;
  std::string help = usageText("mlp", spec);
  for (const char *word :
       {"train", "eval", "init", "step", "predict", "--input", "--help", "--version", "--data",
        "--epochs", "--steps",
        "--seed", "--load", "--save", "--metrics", "--normalize", "--threads", "--log-every",
        "--batch", "--out", "--poison", "/usr/share/datasets/fashion-mnist", "MLP",
        "mlp.cairn"})
    EXPECT_NE(help.find(word), std::string::npos) << word;
}

} // namespace
