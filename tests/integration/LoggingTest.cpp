// Integration tests through the real msld (see DaemonFixture.h): its log
// (--log-format json|text, service/RequestLog.h) and request ids
// (x-request-id in the request and the response metadata).
#include "DaemonFixture.h"

#include "msl/client/Client.h"
#include "msl/client/FastCompile.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>

namespace msl::test {
namespace {

class LoggingTest : public DaemonTest {};

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// Every line of the log, parsed; a line that is not a JSON object with
// time, level and message fails the test.
std::vector<nlohmann::json> jsonLines(const std::string &log) {
  std::vector<nlohmann::json> out;
  for (const std::string &line : lines(log)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (j.is_discarded())
      continue;
    EXPECT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(j.contains("time") && j["time"].is_string()) << line;
    EXPECT_TRUE(j.contains("level") && j["level"].is_string()) << line;
    EXPECT_TRUE(j.contains("message") && j["message"].is_string()) << line;
    out.push_back(std::move(j));
  }
  return out;
}

// The "rpc finished" objects of `id`.
std::vector<nlohmann::json> finishedLines(const std::vector<nlohmann::json> &log, const std::string &id) {
  std::vector<nlohmann::json> out;
  for (const auto &j : log)
    if (j.value("message", "") == "rpc finished" && j.value("request_id", "") == id)
      out.push_back(j);
  return out;
}

std::string initialMetadata(const grpc::ClientContext &ctx, const std::string &key) {
  const auto &md = ctx.GetServerInitialMetadata();
  auto it = md.find(key);
  return it == md.end() ? std::string("<absent>") : std::string(it->second.data(), it->second.size());
}

grpc::Status compileWithId(Daemon &d, const std::string *requestId, std::string &echoed) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  if (requestId)
    ctx.AddMetadata("x-request-id", *requestId);
  msl::v1::CompileResponse response;
  grpc::Status status = d.compiler().Compile(&ctx, compileRequest(readSourceFile("examples/saxpy.metal")), &response);
  echoed = initialMetadata(ctx, "x-request-id");
  return status;
}

TEST_F(LoggingTest, JsonLogCarriesTheClientsRequestIdAndTheResponseEchoesIt) {
  Daemon &d = startDaemon({"--log-format", "json", "--log-level", "debug"});
  std::string id = "build-1234/shader-7:saxpy", echoed;
  ASSERT_TRUE(compileWithId(d, &id, echoed).ok());
  EXPECT_EQ(echoed, id);
  ASSERT_TRUE(compileWithId(d, &id, echoed).ok()); // a cache hit
  // A request msld refuses is logged with its id too.
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-request-id", "bad-request-1");
    msl::v1::CompileResponse response;
    msl::v1::CompileRequest empty; // no main source
    grpc::Status s = d.compiler().Compile(&ctx, empty, &response);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(initialMetadata(ctx, "x-request-id"), "bad-request-1");
  }
  EXPECT_EQ(d.stop(), 0);

  std::string log = d.log();
  std::vector<nlohmann::json> parsed = jsonLines(log);
  ASSERT_FALSE(parsed.empty()) << log;
  // The daemon's own lines (start, stop) are JSON objects too.
  bool serving = false, stopped = false;
  for (const auto &j : parsed) {
    serving |= j["message"].get<std::string>().find("serving gRPC") != std::string::npos;
    stopped |= j["message"] == "stopped";
  }
  EXPECT_TRUE(serving) << log;
  EXPECT_TRUE(stopped) << log;

  std::vector<nlohmann::json> finished = finishedLines(parsed, id);
  ASSERT_EQ(finished.size(), 2u) << log;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(finished[i]["level"], "info");
    EXPECT_EQ(finished[i]["method"], "Compile");
    EXPECT_EQ(finished[i]["code"], "OK");
    EXPECT_TRUE(finished[i]["duration_ms"].is_number());
    EXPECT_EQ(finished[i]["cache_hit"], i == 1) << finished[i].dump();
  }
  int started = 0;
  for (const auto &j : parsed)
    started += j["message"] == "rpc started" && j.value("request_id", "") == id;
  EXPECT_EQ(started, 2) << log; // --log-level debug

  std::vector<nlohmann::json> bad = finishedLines(parsed, "bad-request-1");
  ASSERT_EQ(bad.size(), 1u) << log;
  EXPECT_EQ(bad[0]["level"], "warn");
  EXPECT_EQ(bad[0]["code"], "INVALID_ARGUMENT");
  EXPECT_FALSE(bad[0].value("error", "").empty()) << bad[0].dump();
}

TEST_F(LoggingTest, MsldMakesUpARequestIdWhenNoneIsSent) {
  Daemon &d = startDaemon({"--log-format", "json"});
  std::string echoed;
  ASSERT_TRUE(compileWithId(d, nullptr, echoed).ok());
  ASSERT_EQ(echoed.size(), 32u) << echoed;
  EXPECT_EQ(echoed.find_first_not_of("0123456789abcdef"), std::string::npos) << echoed;
  std::string second;
  ASSERT_TRUE(compileWithId(d, nullptr, second).ok());
  EXPECT_NE(second, echoed);
  EXPECT_EQ(d.stop(), 0);
  std::vector<nlohmann::json> parsed = jsonLines(d.log());
  EXPECT_EQ(finishedLines(parsed, echoed).size(), 1u) << d.log();
  EXPECT_EQ(finishedLines(parsed, second).size(), 1u) << d.log();
  for (const auto &j : parsed) // --log-level info: no "rpc started"
    EXPECT_NE(j["message"], "rpc started") << j.dump();
}

// Hostile ids: gRPC's own client refuses to send control bytes, so those go
// through mslc's raw HTTP/2 path (fastCompile puts header bytes as given).
TEST_F(LoggingTest, HostileRequestIdsAreSanitizedAndTheLogStaysValidJson) {
  Daemon &d = startDaemon({"--log-format", "json"});
  msl::v1::CompileRequest request = compileRequest(readSourceFile("examples/saxpy.metal"));

  // Quotes, backslashes, braces: printable, kept as sent (JSON escapes them).
  std::string quoted = R"(a"b\c{"level":"error"}')", echoed;
  ASSERT_TRUE(compileWithId(d, &quoted, echoed).ok());
  EXPECT_EQ(echoed, quoted);

  // 7 KB (gRPC takes headers up to 8 KiB): cut to 128 bytes.
  std::string longId = std::string(7000, 'x') + "END";
  ASSERT_TRUE(compileWithId(d, &longId, echoed).ok());
  EXPECT_EQ(echoed, std::string(128, 'x'));

  // Newlines, a fake JSON line, a tab, a DEL and UTF-8, raw on the wire.
  msl::client::ClientOptions options;
  options.address = d.address();
  options.request_id = "evil\n{\"level\":\"info\",\"message\":\"forged\"}\r\n\tx\x7f\xc3\xa9";
  std::optional<msl::client::Result<msl::v1::CompileResponse>> raw = msl::client::fastCompile(options, request);
  bool rawArrived = raw && raw->ok();
  // 10 KB: over gRPC's header limit, refused by gRPC or cut by msld.
  options.request_id = std::string(10 * 1024, 'y') + "\n";
  raw = msl::client::fastCompile(options, request);
  bool hugeArrived = raw && raw->ok();
  std::cerr << "note: a 10 KiB request id: "
            << (!raw ? std::string("the raw path gave up")
                     : raw->ok() ? std::string("answered") : raw->status().error_message())
            << "\n";

  // msld serves on.
  ASSERT_TRUE(compileWithId(d, nullptr, echoed).ok());
  EXPECT_EQ(d.stop(), 0);

  std::string log = d.log();
  std::vector<nlohmann::json> parsed = jsonLines(log);
  EXPECT_EQ(finishedLines(parsed, quoted).size(), 1u) << log;
  EXPECT_EQ(finishedLines(parsed, std::string(128, 'x')).size(), 1u) << log;
  for (const auto &j : parsed) {
    EXPECT_NE(j["message"], "forged") << "a request id forged a log line: " << log;
    std::string id = j.value("request_id", "");
    EXPECT_LE(id.size(), 128u);
    for (char c : id)
      EXPECT_TRUE(c >= 0x21 && c <= 0x7e) << "byte " << int(c) << " in request_id " << id;
  }
  if (hugeArrived) {
    EXPECT_EQ(finishedLines(parsed, std::string(128, 'y')).size(), 1u) << log;
  }
  if (rawArrived) {
    std::string expected = "evil_{\"level\":\"info\",\"message\":\"forged\"}___x___";
    EXPECT_EQ(finishedLines(parsed, expected).size(), 1u) << log;
  } else {
    std::cerr << "note: gRPC refused the raw id with control bytes before msld saw it\n";
  }
}

// mslc --request-id, through its raw HTTP/2 path and through gRPC's client.
TEST_F(LoggingTest, MslcSendsItsRequestId) {
  Daemon &d = startDaemon({"--log-format", "json"});
  std::string out = (dir_ / "saxpy.air").string();
  std::string mslc = binDir() + "/mslc --server " + d.address() + " -c '" + sourceDir() +
                     "/examples/saxpy.metal' -o '" + out + "' --request-id ";
  EXPECT_EQ(std::system((mslc + "mslc-fast-1").c_str()), 0);
  EXPECT_EQ(std::system(("MSLC_NO_FAST_PATH=1 " + mslc + "mslc-grpc-2").c_str()), 0);
  // An id mslc would send with control bytes or blanks is refused before sending.
  EXPECT_NE(std::system((mslc + "'two words' 2>/dev/null").c_str()), 0);
  EXPECT_EQ(d.stop(), 0);
  std::vector<nlohmann::json> parsed = jsonLines(d.log());
  EXPECT_EQ(finishedLines(parsed, "mslc-fast-1").size(), 1u) << d.log();
  EXPECT_EQ(finishedLines(parsed, "mslc-grpc-2").size(), 1u) << d.log();
}

TEST_F(LoggingTest, TextLogHasOneLinePerRequestWithItsId) {
  Daemon &d = startDaemon(); // --log-format text is the default
  std::string id = "text-req-1", echoed;
  ASSERT_TRUE(compileWithId(d, &id, echoed).ok());
  EXPECT_EQ(echoed, id);
  msl::client::ClientOptions options;
  options.address = d.address();
  options.request_id = "two\nlines";
  auto raw = msl::client::fastCompile(options, compileRequest(readSourceFile("examples/saxpy.metal")));
  EXPECT_EQ(d.stop(), 0);
  std::string log = d.log();
  int found = 0;
  for (const std::string &line : lines(log)) {
    EXPECT_EQ(line.rfind("lines", 0), std::string::npos) << "a request id split a log line:\n" << log;
    if (line.find("rpc finished") != std::string::npos && line.find("request_id=text-req-1") != std::string::npos) {
      ++found;
      EXPECT_NE(line.find("method=Compile"), std::string::npos) << line;
      EXPECT_NE(line.find("code=OK"), std::string::npos) << line;
      EXPECT_NE(line.find("duration_ms="), std::string::npos) << line;
    }
  }
  EXPECT_EQ(found, 1) << log;
  if (raw && raw->ok()) {
    EXPECT_NE(log.find("request_id=two_lines"), std::string::npos) << log;
  }
}

} // namespace
} // namespace msl::test
