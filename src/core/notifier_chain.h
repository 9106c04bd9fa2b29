// The notifier chain: subscribers ordered by priority (higher first), then by order of
// subscription. Copy-on-write: a call iterates the list of its start, so a subscriber may
// subscribe or unsubscribe others (or itself) while being called.
//
// Context: every method runs under the control lock (add, remove and set_priority under
// the engine-wide control).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ifcore/notifier.h"

namespace ifcore {

struct StatsCounters;

class NotifierChain {
 public:
  struct Entry {
    SubscriptionId id;
    int priority;
    std::uint64_t seq;
    Subscriber* sub;
    std::string name;
    EventMask events = kAllEvents;
    bool concurrent = false;  // SubscribeOptions::concurrent
    bool wants(NetdevEvent e) const { return takes(events, e); }
  };
  using List = std::vector<Entry>;

  SubscriptionId add(Subscriber& s, const SubscribeOptions& o);
  // Returns the removed entry's subscriber, or nullptr if unknown.
  Subscriber* remove(SubscriptionId id);
  void set_priority(SubscriptionId id, int priority);
  std::shared_ptr<const List> snapshot() const { return list_; }
  const Entry* find(SubscriptionId id) const;

  // One call of the chain: the list of its start, valid until the call ends even if the
  // chain changes meanwhile (a list replaced during a call is kept until the outermost call
  // ends). Cheaper than a snapshot: no reference is counted per call. Calls nest.
  //
  // Under a namespace's control (`counted` false) the chain cannot change (only the
  // engine-wide control subscribes and unsubscribes), and calls of several namespaces
  // run at once: nothing is counted.
  class Call {
   public:
    Call(NotifierChain& c, bool counted) : chain_(c), list_(*c.list_), counted_(counted) {
      if (counted_) ++c.calls_;
    }
    ~Call() {
      if (counted_ && --chain_.calls_ == 0) chain_.replaced_.clear();
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    const List& list() const { return list_; }

   private:
    NotifierChain& chain_;
    const List& list_;
    bool counted_;
  };

 private:
  void publish(List next);
  std::shared_ptr<const List> list_ = std::make_shared<List>();
  int calls_ = 0;                                      // Calls under way
  std::vector<std::shared_ptr<const List>> replaced_;  // lists they may still iterate
  SubscriptionId next_id_ = 1;
  std::uint64_t next_seq_ = 1;
};

}  // namespace ifcore
