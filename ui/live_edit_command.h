// An undo step for an edit already on show when it is pushed (a typed field, a what-if
// change): the first redo does nothing, undo and redo restore the state before and after.
// Edits with the same key within two seconds merge (typing "128" is one step, not three);
// a step once undone or redone is closed and takes no more edits.
#pragma once

#include <QDateTime>
#include <QUndoCommand>

namespace shardlab::ui {

template <class State, class Key>
class LiveEditCommand : public QUndoCommand {
public:
    // `mergeable` false: this step never takes a later edit (e.g. an action, not a field).
    LiveEditCommand(State before, State after, Key key, bool mergeable, const QString& text = {})
        : QUndoCommand(text), m_before(std::move(before)), m_after(std::move(after)), m_key(std::move(key)),
          m_mergeable(mergeable), m_time(QDateTime::currentMSecsSinceEpoch())
    {
    }
    void redo() final
    {
        if (m_first) {
            m_first = false;
            return;
        }
        m_closed = true;
        apply(m_after);
    }
    void undo() final
    {
        m_closed = true;
        apply(m_before);
    }
    // Only called by QUndoStack for a step of the same id(), i.e. the same subclass.
    bool mergeWith(const QUndoCommand* other) final
    {
        const auto* o = static_cast<const LiveEditCommand*>(other);
        if (m_closed || !m_mergeable || o->m_key != m_key || o->m_time - m_time > kMergeMs)
            return false;
        m_after = o->m_after;
        m_time = o->m_time;
        return true;
    }

protected:
    virtual void apply(const State& s) = 0;
    const Key& key() const { return m_key; }

private:
    static constexpr qint64 kMergeMs = 2000;
    State m_before, m_after;
    Key m_key;
    bool m_mergeable;
    qint64 m_time;
    bool m_first = true;
    bool m_closed = false;
};

} // namespace shardlab::ui
