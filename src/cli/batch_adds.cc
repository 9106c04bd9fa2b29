// cli/batch_adds.cc — runs of `link add` lines sent as create batches (batch_adds.h).
#include "cli/batch_adds.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "cli/args.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"

namespace ifcore::cli {

namespace {

// Bytes of requests per batch: the message stays under a socket's default send buffer and
// a ring's largest datagram.
constexpr std::size_t kBatchBytes = std::size_t{128} << 10;

// Words before `type` that name another device or namespace: such a line goes alone.
bool names_another(const std::string& w) {
  static const char* const kWords[] = {"link", "netns",      "master",
                                       "vrf",  "link-netns", "link-netnsid"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](const char* k) { return w == k; });
}

// The results of one create batch of bodies [from, to), in request order.
Result<std::vector<wire::BulkResult>> send_batch(Client& client, const BatchedAdds& adds,
                                                 std::size_t from, std::size_t to) {
  wire::MessageBuilder b(kBatchBytes * 2);
  wire::Header h{RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL, client.next_seq(), 0};
  std::span<const std::vector<std::uint8_t>> bodies(adds.bodies.data() + from, to - from);
  if (auto e = wire::encode_bulk_create_bodies(b, h, bodies); !e)
    return die(2, "{}", e.error().message);
  std::vector<wire::BulkResult> results;
  auto collect = [&](const wire::Message& m) {
    if (auto r = wire::decode_bulk_result(m)) results.push_back(std::move(*r));
  };
  int err = 0;
  std::string ext;
  IFCORE_TRY(client.talk_raw(b, collect, err, ext));
  if (err) return die(2, "{}", rtnl_error_text(err, ext));
  if (results.size() != to - from)
    return die(2, "ifcored answered {} results for a batch of {}", results.size(), to - from);
  return results;
}

// The first result that failed (the one at fault rather than one cancelled because of it),
// or results.size() when all were made.
std::size_t first_failure(const std::vector<wire::BulkResult>& results) {
  std::size_t cancelled = results.size();
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].error == 0) continue;
    if (results[i].error != ECANCELED) return i;
    cancelled = std::min(cancelled, i);
  }
  return cancelled;
}

void report_line(const Error& e, const std::string& file, int line) {
  if (!e.message.empty()) std::fprintf(stderr, "%s\n", e.message.c_str());
  std::fprintf(stderr, "Command failed %s:%d\n", file.c_str(), line);
}

}  // namespace

bool batchable_add(const std::vector<std::string>& words) {
  if (words.size() < 4 || !matches(words[0], "link") || !matches(words[1], "add")) return false;
  for (std::size_t i = 2; i + 1 < words.size(); ++i) {
    if (names_another(words[i])) return false;
    if (words[i] == "type") return words[i + 1] == "dummy" && i + 2 == words.size();
  }
  return false;
}

void defer_add(BatchedAdds& adds, std::span<const std::uint8_t> message) {
  auto body = message.subspan(NLMSG_HDRLEN);
  adds.bodies.emplace_back(body.begin(), body.end());
  adds.bytes += body.size();
}

bool adds_full(const BatchedAdds& adds) {
  return adds.bytes >= kBatchBytes;
}

FlushOutcome flush_adds(Client& client, BatchedAdds& adds, const std::string& file, bool force,
                        const std::function<void()>& before_report) {
  FlushOutcome outcome = FlushOutcome::Done;
  const std::size_t n = adds.bodies.size();
  // [from, to): the lines sent next. A batch that fails at line k is sent again without
  // it and what follows (those lines were not made), then line k is reported.
  std::size_t from = 0, to = n;
  while (from < n) {
    auto results = send_batch(client, adds, from, to);
    std::size_t bad = 0;
    Error e;
    if (results) {
      bad = first_failure(*results);
      if (bad == results->size()) {
        from = to;
        to = n;
        continue;
      }
      if (bad > 0) {
        to = from + bad;
        continue;
      }
      const wire::BulkResult& r = (*results)[0];
      e = Error{2, rtnl_error_text(r.error, r.message)};
    } else {
      e = results.error();
    }
    if (before_report) before_report();
    report_line(e, file, adds.lines[from]);
    outcome = FlushOutcome::Failed;
    if (!force) {
      outcome = FlushOutcome::Stop;
      break;
    }
    ++from;
    to = n;
  }
  adds = BatchedAdds{};
  return outcome;
}

}  // namespace ifcore::cli
