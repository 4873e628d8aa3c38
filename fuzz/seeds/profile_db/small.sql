-- A small profiler database in the schema of tests/profile/db_fixture.h (scripts/fuzz.sh turns
-- it into a .db seed with python3's sqlite3): two kernels, one communication op, PMU rows.
PRAGMA page_size = 512;
CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockDim INTEGER,mixBlockDim INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER, waitNs INTEGER);
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC);
CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER, waitNs INTEGER);
CREATE TABLE NPU_INFO (id INTEGER,name TEXT);
INSERT INTO NPU_INFO VALUES (0,'Ascend910B');
CREATE TABLE AICORE_FREQ (deviceId INTEGER,timestampNs NUMERIC,freq INTEGER);
INSERT INTO AICORE_FREQ VALUES (0,1,1650),(0,2,1800);
CREATE TABLE META_DATA (name TEXT,value TEXT);
INSERT INTO META_DATA VALUES ('SCHEMA_VERSION_MAJOR','1'),('SCHEMA_VERSION','1.0.0');
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);
INSERT INTO STRING_IDS VALUES (1,'MatMul_1'),(2,'KERNEL_AICORE'),(3,'AI_CORE'),(4,'MatMulV2'),(5,'ND;ND'),(6,'FLOAT16;FLOAT16'),(7,'"64,128;128,256"'),(8,'ND'),(9,'FLOAT16'),(10,'"64,256"'),(11,'Add_2'),(12,'AI_VECTOR_CORE'),(13,'Add'),(14,'"64,256;64,256"'),(15,'hcom_allReduce__1'),(16,'hcom_allReduce_'),(17,'aic_total_cycles'),(18,'aic_mac_ratio'),(19,'aiv_vec_ratio');
INSERT INTO TASK (startNs,endNs,deviceId,globalTaskId,taskType,streamId,taskId) VALUES (1000000,1012500,0,0,2,3,1),(1013000,1015000,0,1,2,3,2);
INSERT INTO COMPUTE_TASK_INFO VALUES (1,0,20,0,3,4,5,6,7,8,9,10,NULL,300),(11,1,40,0,12,13,5,6,14,8,9,10,NULL,0);
INSERT INTO TASK_PMU_INFO VALUES (0,17,20625.0),(0,18,0.61),(1,19,0.8);
INSERT INTO COMMUNICATION_OP (opName,startNs,endNs,opId,opType,waitNs) VALUES (15,1016000,1030000,2,16,100);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
INSERT INTO STEP_TIME VALUES (1,1000000,1030000);
