// A port's answers: the envelope (JSON, id, ok), an op's outcome, an observation; everything else is an answer_error.
#include <gtest/gtest.h>

#include "properties/port/port_answer.h"
#include "properties/trace/refusal.h"

namespace kv = kvconform;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kv::answer_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(PortAnswer, TheEnvelopeMustMatchTheRequest) {
  EXPECT_EQ(error_of([] { kv::check_answer(R"({"id":3,"ok":true})", 3); }), "(no error)");
  EXPECT_NE(error_of([] { kv::check_answer("hello", 3); }).find("not JSON: hello"), std::string::npos);
  EXPECT_NE(error_of([] { kv::check_answer(R"({"id":3})", 3); }).find("lacks \"id\" or a boolean \"ok\""),
            std::string::npos);
  EXPECT_NE(error_of([] { kv::check_answer(R"({"id":2,"ok":true})", 3); }).find("id 2 to request 3 (out of order)"),
            std::string::npos);
  EXPECT_NE(error_of([] { kv::check_answer(std::string(100, '[') + std::string(100, ']'), 3); }).find("nested"),
            std::string::npos);
  // Not UTF-8, and a 3-byte character across the 200-byte excerpt: the message is still valid UTF-8.
  const std::string e = error_of([] { kv::check_answer(std::string(199, 'a') + "\xe2\x82\xac\xff", 3); });
  EXPECT_EQ(e.substr(e.size() - 4), "a...");
}

TEST(PortAnswer, AnOpsOutcomeIsReadFieldByField) {
  const kv::op_outcome ok =
      kv::op_answer(R"({"id":1,"ok":true,"output":[1,"nan"],"weights":[0.5],"preempted":[2]})", 1, kv::op_kind::decode);
  EXPECT_TRUE(ok.accepted);
  EXPECT_EQ(ok.output.size(), 2u);
  EXPECT_EQ(ok.preempted, (std::vector<std::int64_t>{2}));
  const kv::op_outcome refused =
      kv::op_answer(R"({"id":1,"ok":false,"error":"capacity","message":"full\u001b[0m"})", 1, kv::op_kind::append);
  EXPECT_FALSE(refused.accepted);
  EXPECT_EQ(refused.reason, kv::refuse_capacity);
  EXPECT_EQ(refused.message, "full\\x1b[0m");  // no terminal escape reaches the report
  EXPECT_NE(error_of([] {
              kv::op_answer(R"({"id":1,"ok":true,"output":"x"})", 1, kv::op_kind::decode);
            }).find("malformed answer to decode: output: expected an array of numbers"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              kv::op_answer(R"({"id":1,"ok":true,"preempted":[1.5]})", 1, kv::op_kind::append);
            }).find("preempted"),
            std::string::npos);
}

TEST(PortAnswer, AnObservationIsReadFieldByField) {
  const kv::snapshot s = kv::observe_answer(
      R"({"id":4,"ok":true,"streams":[{"name":"","keys":{"shape":[1,2],"data":[1,2]},"values":{"shape":[1,1],)"
      R"("data":[3]},"positions":[7]}],"counters":{"size":1,"total":8},"block_refs":[[0,1]]})",
      4);
  ASSERT_EQ(s.streams.size(), 1u);
  EXPECT_EQ(s.streams[0].d_k, 2u);
  EXPECT_EQ(s.streams[0].positions, (std::vector<std::int64_t>{7}));
  EXPECT_EQ(s.counters.size(), 2u);
  EXPECT_EQ(s.block_refs.size(), 1u);
  for (const char* bad : {R"({"id":4,"ok":false})", R"({"id":4,"ok":true,"streams":{},"counters":{}})",
                          R"({"id":4,"ok":true,"streams":[],"counters":[]})",
                          R"({"id":4,"ok":true,"streams":[],"counters":{},"block_refs":[[1]]})",
                          R"({"id":4,"ok":true,"streams":[{"keys":{"shape":[2],"data":[1,2]},)"
                          R"("values":{"shape":[2],"data":[1,2]}}],"counters":{}})"})
    EXPECT_NE(error_of([&] { kv::observe_answer(bad, 4); }), "(no error)") << bad;
}
