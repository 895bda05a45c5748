-- Argo CD health of a MachineConfigGuest (mco-wasm.io/v1alpha1), from the
-- status mco-host's lease holder writes (host/registry/src/crd/mod.rs):
--   no status, or one about an older generation       Progressing
--   status.rollout.stage RolledBack                   Degraded
--   condition Degraded True (the spec does not serve) Degraded
--   status.rollout.stage Shadow or Canary             Progressing
--   Active (or no rollout) and Ready True             Healthy
--   Ready False                                       Degraded
-- Argo CD runs it in gopher-lua (Lua 5.1) with only the base, table and
-- os libraries: no string functions here.
local hs = {}
local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for mco-host to report this guest"
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration ~= obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for mco-host to act on generation " .. obj.metadata.generation
  return hs
end

local ready = nil
local degraded = nil
if status.conditions ~= nil then
  for _, condition in ipairs(status.conditions) do
    if condition.type == "Ready" then
      ready = condition
    elseif condition.type == "Degraded" then
      degraded = condition
    end
  end
end

local rollout = status.rollout
if rollout ~= nil and rollout.stage == "RolledBack" then
  hs.status = "Degraded"
  hs.message = "The candidate was rolled back"
  if rollout.message ~= nil and rollout.message ~= "" then
    hs.message = hs.message .. ": " .. rollout.message
  end
  return hs
end
if degraded ~= nil and degraded.status == "True" then
  hs.status = "Degraded"
  hs.message = degraded.reason .. ": " .. degraded.message
  return hs
end
if rollout ~= nil and (rollout.stage == "Shadow" or rollout.stage == "Canary") then
  hs.status = "Progressing"
  hs.message = rollout.stage .. " since " .. rollout.since .. ": " .. rollout.agree .. " agree, "
    .. rollout.differ .. " differ, " .. rollout.failed .. " failed"
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  if rollout ~= nil then
    hs.message = "Active: " .. hs.message
  end
  return hs
end
if ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.reason .. ": " .. ready.message
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the guest to be Ready"
return hs
