"""Estimate against truth in a run's record: `python tools/ekf_accuracy.py OUT` (docs/estimation.md).

Truth position is the base body's, NED from its first recorded position; attitude error is the angle
between the estimated and true FRD-to-NED rotations [deg]."""
import sys

import numpy as np
import pyarrow.dataset as ds
from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np
t = ds.dataset(sys.argv[1] + "/record.parquet").to_table().to_pandas()
pose = t[[f"body/base.pose[{i}]" for i in range(7)]].to_numpy()
pos = np.array([enu_to_ned_np(p - pose[0, :3]) for p in pose[:, :3]])
est = t[[f"estimate.position[{i}]" for i in range(3)]].to_numpy()
vel_t = np.array([enu_to_ned_np(v) for v in t[[f"body/base.velocity[{i}]" for i in range(3)]].to_numpy()])
vel_e = t[[f"estimate.velocity[{i}]" for i in range(3)]].to_numpy()
qe = t[[f"estimate.attitude[{i}]" for i in range(4)]].to_numpy()
qt = np.array([attitude_ned_frd_np(q) for q in pose[:, 3:]])
dot = np.abs(np.sum(qe * qt, axis=1)).clip(0, 1)
att = 2 * np.degrees(np.arccos(dot))
e = est - pos
print("pos err max |h|", np.abs(np.hypot(e[:,0],e[:,1])).max(), "max |d|", np.abs(e[:,2]).max(), "rms", np.sqrt((e**2).mean(0)))
print("vel err rms", np.sqrt(((vel_e-vel_t)**2).mean(0)), "max", np.abs(vel_e-vel_t).max(0))
print("att err deg max", att.max(), "rms", np.sqrt((att**2).mean()), "after 2s max", att[500:].max())
print("status", np.unique(t["estimate_status"].to_numpy()))
print("resets", t["ekf_resets"].to_numpy()[-1], "reset sum", t[[f"estimate_reset[{i}]" for i in range(3)]].to_numpy()[-1])
print("var end", t[[f"ekf_variance[{i}]" for i in range(15)]].to_numpy()[-1])
print("rej", t[[f"ekf_rejected[{i}]" for i in range(9)]].to_numpy()[-1])
print("ratio max", t[[f"ekf_test_ratio[{i}]" for i in range(9)]].to_numpy().max(0))
print("true max alt", -pos[:,2].min())
