// The ordered notifier chain.
#include "core/notifier_chain.h"

#include <algorithm>

namespace ifcore {

const char* to_string(NetdevEvent e) {
  switch (e) {
    case NetdevEvent::Register:
      return "REGISTER";
    case NetdevEvent::PreUp:
      return "PRE_UP";
    case NetdevEvent::Up:
      return "UP";
    case NetdevEvent::GoingDown:
      return "GOING_DOWN";
    case NetdevEvent::Down:
      return "DOWN";
    case NetdevEvent::Change:
      return "CHANGE";
    case NetdevEvent::PreChangeMtu:
      return "PRECHANGEMTU";
    case NetdevEvent::ChangeMtu:
      return "CHANGEMTU";
    case NetdevEvent::PreChangeAddr:
      return "PRE_CHANGEADDR";
    case NetdevEvent::ChangeAddr:
      return "CHANGEADDR";
    case NetdevEvent::PreChangeName:
      return "PRECHANGENAME";
    case NetdevEvent::ChangeName:
      return "CHANGENAME";
    case NetdevEvent::Configured:
      return "CONFIGURED";
    case NetdevEvent::PreChangeUpper:
      return "PRECHANGEUPPER";
    case NetdevEvent::ChangeUpper:
      return "CHANGEUPPER";
    case NetdevEvent::ChangeInfoData:
      return "CHANGEINFODATA";
    case NetdevEvent::Unregister:
      return "UNREGISTER";
    case NetdevEvent::NotifyFlags:
      return "NOTIFY_FLAGS";
    case NetdevEvent::ChangeTxQueueLen:
      return "CHANGE_TX_QUEUE_LEN";
    case NetdevEvent::FeatChange:
      return "FEAT_CHANGE";
    case NetdevEvent::Uninit:
      return "UNINIT";
  }
  return "?";
}

bool is_vetoable(NetdevEvent e) {
  switch (e) {
    case NetdevEvent::Register:
    case NetdevEvent::PreUp:
    case NetdevEvent::PreChangeMtu:
    case NetdevEvent::PreChangeAddr:
    case NetdevEvent::PreChangeName:
    case NetdevEvent::PreChangeUpper:
      return true;
    default:
      return false;
  }
}

SubscriptionId NotifierChain::add(Subscriber& s, const SubscribeOptions& o) {
  List next = *list_;
  Entry e{next_id_++, o.priority, next_seq_++, &s, o.name, o.events, o.concurrent};
  auto pos = std::find_if(next.begin(), next.end(),
                          [&](const Entry& x) { return x.priority < e.priority; });
  next.insert(pos, e);
  publish(std::move(next));
  return e.id;
}

Subscriber* NotifierChain::remove(SubscriptionId id) {
  List next = *list_;
  auto it = std::find_if(next.begin(), next.end(), [&](const Entry& x) { return x.id == id; });
  if (it == next.end()) return nullptr;
  Subscriber* s = it->sub;
  next.erase(it);
  publish(std::move(next));
  return s;
}

void NotifierChain::set_priority(SubscriptionId id, int priority) {
  List next = *list_;
  auto it = std::find_if(next.begin(), next.end(), [&](const Entry& x) { return x.id == id; });
  if (it == next.end()) return;
  it->priority = priority;
  std::stable_sort(next.begin(), next.end(), [](const Entry& a, const Entry& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.seq < b.seq;
  });
  publish(std::move(next));
}

const NotifierChain::Entry* NotifierChain::find(SubscriptionId id) const {
  for (auto& e : *list_)
    if (e.id == id) return &e;
  return nullptr;
}

void NotifierChain::publish(List next) {
  if (calls_ > 0) replaced_.push_back(list_);
  list_ = std::make_shared<const List>(std::move(next));
}

}  // namespace ifcore
