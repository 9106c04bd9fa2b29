// rtnl/create_batch.cc — ifcore's create batch (docs/WIRE.md, "Create batch"): the items
// are decoded one at a time into one place, each checked and prepared by the engine before
// the next is read (Control::create_links with a LinkRequestSource), registered in one
// pass, announced, given their addresses, and answered with one result each.
//
// Lock order: handle_newlink's control lock (then Hub::mu_ through the notifications).
#include <cerrno>
#include <utility>

#include "ifcore/inet.h"
#include "ifcore/namespace.h"
#include "rtnl/handlers.h"
#include "rtnl/proto.h"
#include "rtnl/wire/bulk.h"
#include "rtnl/wire/bulk_create.h"

namespace ifcore::rtnl {

namespace {

// An item's addresses, kept for after the registration.
struct ItemAddrs {
  std::size_t item;
  std::vector<wire::AddrMessage> addrs;
};

// The batch's requests as the engine reads them: each item checked as a plain create is
// (check_create, its addresses' families) once decoded. A decoding error is the request's
// error, not an item's: it is kept apart.
class ItemSource final : public LinkRequestSource {
 public:
  ItemSource(Request& r, Control& ctl, Namespace& ns, wire::BulkCreateReader& bulk)
      : r_(r), ctl_(ctl), ns_(ns), bulk_(bulk) {}

  std::size_t size_hint() const override { return bulk_.size(); }

  Result<const LinkRequest*> next() override {
    auto more = bulk_.next(item_);
    if (!more) {
      decode_error_ = more.error();
      return fail(std::move(more).error());
    }
    if (!*more) return nullptr;
    std::size_t i = read_++;
    const LinkRequest& req = item_.link.req;
    if (req.kind && (!kind_ || kind_->name() != *req.kind)) kind_ = ctl_.find_kind(*req.kind);
    IFCORE_TRY(check_create(r_, ctl_, ns_, item_.link, req.kind ? kind_ : nullptr));
    for (const wire::AddrMessage& a : item_.addrs) IFCORE_TRY(check_family(a.family));
    if (!item_.addrs.empty()) addrs_.push_back({i, std::move(item_.addrs)});
    return &item_.link.req;
  }

  // The first decoding error of the whole request, whether or not the engine read that far
  // (an item's refusal stops the reading; a later item that does not decode still makes
  // the request malformed).
  std::optional<Error> decode_error() {
    if (!decode_error_)
      if (auto rest = bulk_.check_rest(); !rest) decode_error_ = std::move(rest).error();
    return decode_error_;
  }
  std::vector<ItemAddrs>& addrs() { return addrs_; }

 private:
  Request& r_;
  Control& ctl_;
  Namespace& ns_;
  wire::BulkCreateReader& bulk_;
  wire::BulkLink item_;         // the item read last
  const Kind* kind_ = nullptr;  // its kind, if it named one Control::find_kind knows
  std::size_t read_ = 0;
  std::optional<Error> decode_error_;
  std::vector<ItemAddrs> addrs_;
};

// Each device's addresses (Linux: what RTM_NEWADDR does for each); a refusal unregisters
// the whole batch again.
std::optional<BatchError> add_batch_addresses(Control& ctl, Namespace& ns,
                                              std::vector<ItemAddrs>& items,
                                              const std::vector<Device*>& devs) {
  for (ItemAddrs& item : items) {
    for (wire::AddrMessage& a : item.addrs) {
      a.ifindex = static_cast<std::uint32_t>(devs[item.item]->ifindex());
      auto made = inet::add_address(ctl, ns, addr_request(a, NLM_F_CREATE | NLM_F_EXCL));
      if (made) continue;
      UnregisterBatch undo;
      for (Device* d : devs) undo.add(*d);
      ctl.commit(undo);
      return BatchError{item.item, std::move(made).error()};
    }
  }
  return std::nullopt;
}

// Creates the batch, announces its devices, adds their addresses; `devs` are the devices.
std::optional<BatchError> run_create_batch(Request& r, Control& ctl, ScopeGuard& guard,
                                           Namespace& ns, ItemSource& source,
                                           std::vector<Device*>& devs) {
  RequestScope& sc = guard.scope();
  sc.defer_new = true;
  auto made = ctl.create_links(ns, source);
  sc.defer_new = false;
  std::vector<Device*> created = std::move(sc.created);
  sc.created.clear();
  if (!made) return std::move(made).error();
  for (Device* dev : created)
    if (dev->state() == RegState::Registered) r.s.hub().publish_link(ctl, *dev, RTM_NEWLINK, ~0u);
  devs = std::move(*made);
  return add_batch_addresses(ctl, ns, source.addrs(), devs);
}

// The results of a batch that failed: each item with the name it asked for; the item at
// fault carries its error (every item does when the batch as a whole was refused), the
// others ECANCELED. The names are decoded again: the batch was read once, keeping none.
Result<void> send_failure(Request& r, Control& ctl, const BatchError& e) {
  wire::DecodeContext ctx = decode_context(ctl);
  auto bulk = wire::BulkCreateReader::open(r.m, ctx);
  if (!bulk || !*bulk) return fail(EPROTO, "create batch could not be read again");
  std::vector<wire::BulkResult> results((*bulk)->size());
  wire::BulkLink item;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto more = (*bulk)->next(item);
    if (!more || !*more) return fail(EPROTO, "create batch could not be read again");
    wire::BulkResult& res = results[i];
    res.index = static_cast<std::uint32_t>(i);
    res.name = std::move(item.link.req.name);
    if (!e.item || *e.item == i) {
      res.error = e.error.code;
      res.message = e.error.log_only ? std::string() : e.error.message;
    } else {
      res.error = ECANCELED;
      res.message = fmt::format("not created: item {} failed", *e.item);
    }
  }
  return send_bulk_results(r, results, RTM_NEWLINK);
}

}  // namespace

// One batch, per-item results (multipart RTM_NEWLINK), NLMSG_DONE.
Result<void> create_batch(Request& r, Control& ctl, Namespace& ns, wire::BulkCreateReader& bulk) {
  ItemSource source(r, ctl, ns, bulk);
  std::vector<Device*> devs;
  std::optional<BatchError> failed;
  {
    ScopeGuard guard(r, ctl, ns.id());
    failed = run_create_batch(r, ctl, guard, ns, source, devs);
  }  // the echoed notifications go first
  if (failed) {
    // A request that does not decode is refused whole, as before any item was checked.
    if (auto bad = source.decode_error()) return fail(std::move(*bad));
    return send_failure(r, ctl, *failed);
  }
  // Like the bulk delete: the outcome is in the results; the dispatcher's ACK follows if
  // NLM_F_ACK was set.
  return send_bulk_results(r, devs.size(), RTM_NEWLINK,
                           [&](std::size_t i, wire::BulkResult& res) -> const wire::BulkResult& {
                             res.index = static_cast<std::uint32_t>(i);
                             res.ifindex = devs[i]->ifindex();
                             res.name = devs[i]->name_locked();
                             res.error = 0;
                             res.message.clear();
                             return res;
                           });
}

}  // namespace ifcore::rtnl
